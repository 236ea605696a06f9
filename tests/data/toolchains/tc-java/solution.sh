cd /app
sed -i 's|celsius \* 9 / 5 - 32|celsius * 9 / 5 + 32|' Temperature.java
