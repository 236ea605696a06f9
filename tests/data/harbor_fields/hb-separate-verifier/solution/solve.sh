#!/bin/bash
wc -l < /app/notes.txt > /app/report.txt
