#!/bin/bash
wc -l < /app/notes.txt | tr -d ' ' > /app/count.txt
