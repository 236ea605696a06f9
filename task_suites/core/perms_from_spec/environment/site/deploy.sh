#!/bin/bash
# deploy the site
rsync -a ./ /srv/www/
