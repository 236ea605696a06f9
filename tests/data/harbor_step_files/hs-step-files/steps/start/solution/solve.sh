#!/bin/bash
mkdir -p /app/report && echo ready > /app/report/status.txt
