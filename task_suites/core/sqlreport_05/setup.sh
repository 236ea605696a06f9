# Build the SQLite database from a fixed script (the script itself is not left behind).
mkdir -p /home/user/data
python3 - <<'PY'
import sqlite3
con = sqlite3.connect('/home/user/data/store.sqlite')
con.executescript('''
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL, signup_date TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price_cents INTEGER NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), order_date TEXT NOT NULL, status TEXT NOT NULL);
CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders(id), product_id INTEGER NOT NULL REFERENCES products(id), quantity INTEGER NOT NULL);
INSERT INTO customers VALUES (1, 'Chen Larsen', 'JP', '2024-05-18');
INSERT INTO customers VALUES (2, 'Omar Schmidt', 'KE', '2024-03-22');
INSERT INTO customers VALUES (3, 'Goran Rossi', 'PT', '2024-05-09');
INSERT INTO customers VALUES (4, 'Chen Ivanova', 'PT', '2024-01-21');
INSERT INTO customers VALUES (5, 'Ines Weber', 'NO', '2024-04-26');
INSERT INTO customers VALUES (6, 'Fatima Moreau', 'PT', '2024-01-21');
INSERT INTO customers VALUES (7, 'Bruno Rossi', 'KE', '2024-01-15');
INSERT INTO customers VALUES (8, 'Viktor Okafor', 'PT', '2024-01-20');
INSERT INTO customers VALUES (9, 'Ada Okafor', 'JP', '2024-02-22');
INSERT INTO customers VALUES (10, 'Yara Weber', 'NO', '2024-02-28');
INSERT INTO customers VALUES (11, 'Jonas Nakamura', 'NO', '2024-02-28');
INSERT INTO customers VALUES (12, 'Jonas Schmidt', 'PE', '2024-05-23');
INSERT INTO customers VALUES (13, 'Jonas Petrov', 'PT', '2024-02-05');
INSERT INTO customers VALUES (14, 'Zoltan Weber', 'PE', '2024-04-19');
INSERT INTO products VALUES (1, 'nimbus', 7404);
INSERT INTO products VALUES (2, 'pioneer', 948);
INSERT INTO products VALUES (3, 'umbra', 1303);
INSERT INTO products VALUES (4, 'granite', 5959);
INSERT INTO products VALUES (5, 'juniper', 328);
INSERT INTO products VALUES (6, 'orchid', 3046);
INSERT INTO orders VALUES (102, 12, '2024-01-14', 'refunded');
INSERT INTO orders VALUES (104, 9, '2024-07-20', 'paid');
INSERT INTO orders VALUES (105, 4, '2024-02-21', 'paid');
INSERT INTO orders VALUES (106, 8, '2024-09-15', 'paid');
INSERT INTO orders VALUES (109, 12, '2024-03-07', 'pending');
INSERT INTO orders VALUES (110, 9, '2024-08-16', 'refunded');
INSERT INTO orders VALUES (111, 9, '2024-03-04', 'paid');
INSERT INTO orders VALUES (114, 1, '2024-03-19', 'paid');
INSERT INTO orders VALUES (115, 5, '2024-05-17', 'paid');
INSERT INTO orders VALUES (118, 2, '2024-03-13', 'paid');
INSERT INTO orders VALUES (120, 1, '2024-02-26', 'paid');
INSERT INTO orders VALUES (123, 1, '2024-05-23', 'paid');
INSERT INTO orders VALUES (125, 7, '2024-07-21', 'paid');
INSERT INTO orders VALUES (126, 4, '2024-03-21', 'paid');
INSERT INTO orders VALUES (127, 1, '2024-04-13', 'paid');
INSERT INTO orders VALUES (129, 5, '2024-06-06', 'refunded');
INSERT INTO orders VALUES (132, 11, '2024-06-21', 'paid');
INSERT INTO orders VALUES (135, 4, '2024-04-02', 'paid');
INSERT INTO order_items VALUES (102, 6, 1);
INSERT INTO order_items VALUES (102, 2, 5);
INSERT INTO order_items VALUES (102, 1, 5);
INSERT INTO order_items VALUES (104, 5, 3);
INSERT INTO order_items VALUES (104, 2, 2);
INSERT INTO order_items VALUES (105, 5, 2);
INSERT INTO order_items VALUES (105, 3, 3);
INSERT INTO order_items VALUES (106, 4, 2);
INSERT INTO order_items VALUES (106, 5, 3);
INSERT INTO order_items VALUES (109, 5, 5);
INSERT INTO order_items VALUES (110, 5, 5);
INSERT INTO order_items VALUES (110, 1, 3);
INSERT INTO order_items VALUES (110, 3, 5);
INSERT INTO order_items VALUES (111, 1, 2);
INSERT INTO order_items VALUES (114, 6, 3);
INSERT INTO order_items VALUES (114, 4, 2);
INSERT INTO order_items VALUES (115, 6, 5);
INSERT INTO order_items VALUES (115, 5, 3);
INSERT INTO order_items VALUES (115, 1, 1);
INSERT INTO order_items VALUES (118, 3, 4);
INSERT INTO order_items VALUES (118, 5, 3);
INSERT INTO order_items VALUES (118, 4, 5);
INSERT INTO order_items VALUES (120, 3, 1);
INSERT INTO order_items VALUES (120, 4, 3);
INSERT INTO order_items VALUES (123, 3, 4);
INSERT INTO order_items VALUES (125, 2, 5);
INSERT INTO order_items VALUES (126, 1, 5);
INSERT INTO order_items VALUES (126, 5, 3);
INSERT INTO order_items VALUES (126, 4, 3);
INSERT INTO order_items VALUES (127, 3, 1);
INSERT INTO order_items VALUES (127, 4, 1);
INSERT INTO order_items VALUES (127, 1, 2);
INSERT INTO order_items VALUES (129, 5, 5);
INSERT INTO order_items VALUES (129, 3, 1);
INSERT INTO order_items VALUES (132, 4, 1);
INSERT INTO order_items VALUES (132, 6, 5);
INSERT INTO order_items VALUES (135, 4, 5);
''')
con.commit()
con.close()
PY
