#!/bin/bash
printf 'def count(text):\n    return len(text.split())\n' > /app/wordcount.py
