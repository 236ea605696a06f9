mkdir -p /home/user/reports
{ echo name,cpu,disk_gb; jq -r --arg env staging --arg tag web '.servers[] | select(.env == $env and (.tags | index($tag)) and (.retired != true)) | [.name, .cpu, ([.disks[].size_gb] | add)] | @csv' /home/user/incoming/json/servers.json | tr -d '"' | LC_ALL=C sort; } > /home/user/reports/staging_web_servers.csv
