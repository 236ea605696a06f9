cd /app
sed -i 's|(double)(sum / count)|(double)sum / count|' mean.c
