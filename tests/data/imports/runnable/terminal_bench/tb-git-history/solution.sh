#!/bin/bash
cd /app/project
git log --format=%s > /app/history.txt
