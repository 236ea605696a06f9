# generated from template, do not edit by hand
listen {{  port }};
log_level {{log_level}};
worker_processes {{  workers }};
server_name {{domain}};
# contact {{admin_email}} for {{  app_name }}
upstream_db {{db_host}}:{{  db_port }}/{{  db_name }};
cache_ttl {{cache_ttl}}s;
