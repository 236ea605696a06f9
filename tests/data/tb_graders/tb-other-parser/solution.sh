touch /app/done.txt
