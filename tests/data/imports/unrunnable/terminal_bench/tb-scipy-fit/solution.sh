python3 -c "print('2.0 1.0')" > /app/fit.txt
