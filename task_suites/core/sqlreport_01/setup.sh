# Build the SQLite database from a fixed script (the script itself is not left behind).
mkdir -p /home/user/db
python3 - <<'PY'
import sqlite3
con = sqlite3.connect('/home/user/db/store.sqlite')
con.executescript('''
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL, signup_date TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price_cents INTEGER NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), order_date TEXT NOT NULL, status TEXT NOT NULL);
CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders(id), product_id INTEGER NOT NULL REFERENCES products(id), quantity INTEGER NOT NULL);
INSERT INTO customers VALUES (1, 'Viktor Petrov', 'NO', '2024-01-11');
INSERT INTO customers VALUES (2, 'Goran Nakamura', 'KE', '2024-03-20');
INSERT INTO customers VALUES (3, 'Kiri Petrov', 'JP', '2024-01-16');
INSERT INTO customers VALUES (4, 'Fatima Moreau', 'PT', '2024-05-18');
INSERT INTO customers VALUES (5, 'Nadia Haddad', 'PT', '2024-03-05');
INSERT INTO customers VALUES (6, 'Yara Weber', 'NO', '2024-01-20');
INSERT INTO customers VALUES (7, 'Uma Oliveira', 'NO', '2024-03-19');
INSERT INTO customers VALUES (8, 'Ada Rossi', 'PT', '2024-02-14');
INSERT INTO customers VALUES (9, 'Mateo Oliveira', 'JP', '2024-01-22');
INSERT INTO customers VALUES (10, 'Nadia Petrov', 'KE', '2024-03-16');
INSERT INTO customers VALUES (11, 'Yara Rossi', 'KE', '2024-01-25');
INSERT INTO products VALUES (1, 'iris', 6082);
INSERT INTO products VALUES (2, 'delta', 6271);
INSERT INTO products VALUES (3, 'zephyr', 5916);
INSERT INTO products VALUES (4, 'kestrel', 6840);
INSERT INTO products VALUES (5, 'cobalt', 3030);
INSERT INTO products VALUES (6, 'tundra', 323);
INSERT INTO orders VALUES (103, 7, '2024-01-14', 'paid');
INSERT INTO orders VALUES (106, 4, '2024-01-06', 'paid');
INSERT INTO orders VALUES (107, 7, '2024-02-12', 'paid');
INSERT INTO orders VALUES (110, 3, '2024-01-24', 'pending');
INSERT INTO orders VALUES (113, 6, '2024-08-10', 'paid');
INSERT INTO orders VALUES (114, 1, '2024-02-21', 'paid');
INSERT INTO orders VALUES (115, 4, '2024-07-19', 'refunded');
INSERT INTO orders VALUES (117, 6, '2024-03-27', 'paid');
INSERT INTO orders VALUES (120, 4, '2024-06-14', 'paid');
INSERT INTO orders VALUES (123, 2, '2024-02-24', 'pending');
INSERT INTO orders VALUES (124, 4, '2024-01-23', 'paid');
INSERT INTO orders VALUES (126, 8, '2024-03-26', 'refunded');
INSERT INTO orders VALUES (127, 5, '2024-07-21', 'refunded');
INSERT INTO orders VALUES (128, 2, '2024-02-18', 'paid');
INSERT INTO orders VALUES (130, 7, '2024-08-20', 'refunded');
INSERT INTO orders VALUES (132, 1, '2024-03-13', 'paid');
INSERT INTO orders VALUES (135, 4, '2024-05-08', 'paid');
INSERT INTO orders VALUES (137, 9, '2024-02-19', 'paid');
INSERT INTO orders VALUES (140, 4, '2024-04-05', 'pending');
INSERT INTO orders VALUES (142, 9, '2024-01-20', 'pending');
INSERT INTO orders VALUES (144, 5, '2024-08-09', 'refunded');
INSERT INTO orders VALUES (146, 3, '2024-02-12', 'paid');
INSERT INTO orders VALUES (149, 6, '2024-07-09', 'pending');
INSERT INTO order_items VALUES (103, 5, 3);
INSERT INTO order_items VALUES (103, 1, 3);
INSERT INTO order_items VALUES (103, 4, 4);
INSERT INTO order_items VALUES (106, 5, 5);
INSERT INTO order_items VALUES (106, 2, 2);
INSERT INTO order_items VALUES (106, 1, 5);
INSERT INTO order_items VALUES (107, 2, 4);
INSERT INTO order_items VALUES (107, 4, 4);
INSERT INTO order_items VALUES (110, 4, 4);
INSERT INTO order_items VALUES (110, 3, 1);
INSERT INTO order_items VALUES (113, 5, 1);
INSERT INTO order_items VALUES (114, 6, 4);
INSERT INTO order_items VALUES (114, 1, 4);
INSERT INTO order_items VALUES (114, 5, 4);
INSERT INTO order_items VALUES (115, 1, 4);
INSERT INTO order_items VALUES (115, 5, 2);
INSERT INTO order_items VALUES (117, 1, 5);
INSERT INTO order_items VALUES (120, 4, 1);
INSERT INTO order_items VALUES (123, 1, 2);
INSERT INTO order_items VALUES (123, 6, 2);
INSERT INTO order_items VALUES (124, 3, 3);
INSERT INTO order_items VALUES (124, 5, 3);
INSERT INTO order_items VALUES (126, 6, 3);
INSERT INTO order_items VALUES (127, 4, 4);
INSERT INTO order_items VALUES (127, 3, 3);
INSERT INTO order_items VALUES (127, 5, 3);
INSERT INTO order_items VALUES (128, 1, 2);
INSERT INTO order_items VALUES (130, 3, 1);
INSERT INTO order_items VALUES (130, 5, 1);
INSERT INTO order_items VALUES (132, 1, 4);
INSERT INTO order_items VALUES (135, 3, 2);
INSERT INTO order_items VALUES (135, 6, 4);
INSERT INTO order_items VALUES (137, 4, 1);
INSERT INTO order_items VALUES (140, 4, 2);
INSERT INTO order_items VALUES (142, 1, 2);
INSERT INTO order_items VALUES (142, 4, 1);
INSERT INTO order_items VALUES (144, 3, 3);
INSERT INTO order_items VALUES (144, 5, 5);
INSERT INTO order_items VALUES (146, 4, 4);
INSERT INTO order_items VALUES (149, 5, 4);
INSERT INTO order_items VALUES (149, 6, 5);
''')
con.commit()
con.close()
PY
