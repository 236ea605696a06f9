sed -i \
  -e '/^\[database\]/,/^\[/ s/^port = .*/port = 5433/' \
  -e '/^\[server\]/,/^\[/ s/^debug = .*/debug = false/' \
  -e '/^\[logging\]/,/^\[/ s/^level = .*/level = INFO/' \
  /home/user/app/config.ini
printf '\n[cache]\nenabled = true\nttl = 300\n' >> /home/user/app/config.ini
