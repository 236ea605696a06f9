mkdir -p /home/user/dist
python3 - <<'PY'
import zipfile
paths = [l.strip() for l in open('/home/user/work/nimbus/dist-files.txt') if l.strip() and not l.startswith('#')]
with zipfile.ZipFile('/home/user/dist/nimbus-2.2.7.zip', 'w', zipfile.ZIP_DEFLATED) as z:
    for p in paths:
        z.write('/home/user/work/nimbus/' + p, p)
PY
( cd /home/user/dist && md5sum nimbus-2.2.7.zip > nimbus-2.2.7.zip.md5 )
