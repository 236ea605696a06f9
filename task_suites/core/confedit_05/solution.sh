sed -e 's|^DB_PORT=.*|DB_PORT=6432|' -e 's|^CACHE_URL=.*|CACHE_URL=redis://cache.prod.internal:6379/0|' -e 's|^APP_PORT=.*|APP_PORT=8080|' -e '/^LOG_LEVEL=/d' /home/user/deploy/app.env > /home/user/deploy/prod.env
printf 'READ_ONLY=0\nWORKERS=11\n' >> /home/user/deploy/prod.env
