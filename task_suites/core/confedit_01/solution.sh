sed -e 's|^DB_HOST=.*|DB_HOST=db.production.internal|' -e 's|^APP_PORT=.*|APP_PORT=8080|' -e 's|^DB_PORT=.*|DB_PORT=6432|' -e '/^LOG_LEVEL=/d' /home/user/srv/env/.env.example > /home/user/srv/env/production.env
printf 'WORKERS=10\nTZ=UTC\n' >> /home/user/srv/env/production.env
