psql -h db -U postgres -c "\copy orders to '/app/orders.csv' csv header"
