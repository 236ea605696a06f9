#!/bin/bash
touch /app/site.ok
