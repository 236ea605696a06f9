mkdir -p /home/user/dist
python3 - <<'PY'
import zipfile
paths = [l.strip() for l in open('/home/user/src/borealis/MANIFEST') if l.strip() and not l.startswith('#')]
with zipfile.ZipFile('/home/user/dist/borealis-0.1.3.zip', 'w', zipfile.ZIP_DEFLATED) as z:
    for p in paths:
        z.write('/home/user/src/borealis/' + p, p)
PY
( cd /home/user/dist && sha512sum borealis-0.1.3.zip > borealis-0.1.3.zip.sha512 )
