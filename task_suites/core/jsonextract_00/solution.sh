mkdir -p /home/user/reports
{ echo name,cpu,disk_gb; jq -r --arg env prod --arg tag batch '.servers[] | select(.env == $env and (.tags | index($tag)) and (.retired != true)) | [.name, .cpu, ([.disks[].size_gb] | add)] | @csv' /home/user/api_dump/fleet.json | tr -d '"' | LC_ALL=C sort; } > /home/user/reports/prod_batch_servers.csv
