#!/bin/bash
test -f /app/done.txt && echo "RESOLVED" || echo "UNRESOLVED"
