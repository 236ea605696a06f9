# Build the SQLite database from a fixed script (the script itself is not left behind).
mkdir -p /home/user/var/lib/shop
python3 - <<'PY'
import sqlite3
con = sqlite3.connect('/home/user/var/lib/shop/crm.sqlite3')
con.executescript('''
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL, signup_date TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price_cents INTEGER NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), order_date TEXT NOT NULL, status TEXT NOT NULL);
CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders(id), product_id INTEGER NOT NULL REFERENCES products(id), quantity INTEGER NOT NULL);
INSERT INTO customers VALUES (1, 'Sven Haddad', 'PT', '2024-02-17');
INSERT INTO customers VALUES (2, 'Goran Silva', 'JP', '2024-05-02');
INSERT INTO customers VALUES (3, 'Yara Rossi', 'JP', '2024-04-02');
INSERT INTO customers VALUES (4, 'Lena Larsen', 'PT', '2024-01-03');
INSERT INTO customers VALUES (5, 'Ada Nakamura', 'JP', '2024-03-14');
INSERT INTO customers VALUES (6, 'Lena Schmidt', 'PT', '2024-02-16');
INSERT INTO customers VALUES (7, 'Omar Silva', 'PT', '2024-01-18');
INSERT INTO customers VALUES (8, 'Hana Oliveira', 'JP', '2024-05-12');
INSERT INTO customers VALUES (9, 'Hana Nakamura', 'PT', '2024-04-02');
INSERT INTO customers VALUES (10, 'Omar Silva', 'JP', '2024-04-25');
INSERT INTO customers VALUES (11, 'Mateo Tanaka', 'PT', '2024-05-09');
INSERT INTO customers VALUES (12, 'Ines Moreau', 'NO', '2024-04-05');
INSERT INTO products VALUES (1, 'pioneer', 4656);
INSERT INTO products VALUES (2, 'lumen', 5390);
INSERT INTO products VALUES (3, 'cobalt', 2640);
INSERT INTO products VALUES (4, 'umbra', 5964);
INSERT INTO products VALUES (5, 'orchid', 824);
INSERT INTO products VALUES (6, 'harbor', 4447);
INSERT INTO orders VALUES (103, 2, '2024-03-05', 'paid');
INSERT INTO orders VALUES (106, 1, '2024-01-14', 'pending');
INSERT INTO orders VALUES (108, 3, '2024-04-06', 'paid');
INSERT INTO orders VALUES (110, 4, '2024-08-14', 'paid');
INSERT INTO orders VALUES (111, 10, '2024-05-10', 'paid');
INSERT INTO orders VALUES (112, 10, '2024-06-12', 'pending');
INSERT INTO orders VALUES (114, 2, '2024-05-28', 'paid');
INSERT INTO orders VALUES (117, 1, '2024-01-10', 'refunded');
INSERT INTO orders VALUES (120, 3, '2024-09-16', 'paid');
INSERT INTO orders VALUES (121, 8, '2024-09-03', 'pending');
INSERT INTO orders VALUES (124, 4, '2024-02-12', 'paid');
INSERT INTO orders VALUES (126, 9, '2024-03-26', 'paid');
INSERT INTO orders VALUES (129, 1, '2024-07-17', 'pending');
INSERT INTO orders VALUES (130, 5, '2024-06-15', 'pending');
INSERT INTO orders VALUES (133, 6, '2024-06-01', 'refunded');
INSERT INTO orders VALUES (134, 7, '2024-04-25', 'pending');
INSERT INTO orders VALUES (135, 8, '2024-02-21', 'paid');
INSERT INTO orders VALUES (138, 10, '2024-06-09', 'refunded');
INSERT INTO orders VALUES (140, 4, '2024-08-23', 'refunded');
INSERT INTO orders VALUES (143, 5, '2024-01-03', 'pending');
INSERT INTO order_items VALUES (103, 5, 3);
INSERT INTO order_items VALUES (103, 6, 2);
INSERT INTO order_items VALUES (106, 6, 1);
INSERT INTO order_items VALUES (108, 6, 5);
INSERT INTO order_items VALUES (110, 6, 3);
INSERT INTO order_items VALUES (110, 3, 5);
INSERT INTO order_items VALUES (111, 6, 5);
INSERT INTO order_items VALUES (111, 4, 4);
INSERT INTO order_items VALUES (111, 5, 5);
INSERT INTO order_items VALUES (112, 3, 4);
INSERT INTO order_items VALUES (112, 4, 5);
INSERT INTO order_items VALUES (114, 2, 5);
INSERT INTO order_items VALUES (114, 6, 4);
INSERT INTO order_items VALUES (114, 4, 2);
INSERT INTO order_items VALUES (117, 4, 5);
INSERT INTO order_items VALUES (117, 1, 2);
INSERT INTO order_items VALUES (120, 4, 4);
INSERT INTO order_items VALUES (120, 3, 4);
INSERT INTO order_items VALUES (120, 2, 1);
INSERT INTO order_items VALUES (121, 2, 1);
INSERT INTO order_items VALUES (124, 6, 4);
INSERT INTO order_items VALUES (124, 4, 3);
INSERT INTO order_items VALUES (124, 2, 1);
INSERT INTO order_items VALUES (126, 1, 5);
INSERT INTO order_items VALUES (126, 5, 3);
INSERT INTO order_items VALUES (129, 5, 1);
INSERT INTO order_items VALUES (129, 6, 5);
INSERT INTO order_items VALUES (129, 2, 1);
INSERT INTO order_items VALUES (130, 6, 5);
INSERT INTO order_items VALUES (133, 1, 4);
INSERT INTO order_items VALUES (133, 3, 3);
INSERT INTO order_items VALUES (133, 2, 3);
INSERT INTO order_items VALUES (134, 1, 2);
INSERT INTO order_items VALUES (135, 5, 2);
INSERT INTO order_items VALUES (135, 3, 2);
INSERT INTO order_items VALUES (135, 2, 3);
INSERT INTO order_items VALUES (138, 1, 1);
INSERT INTO order_items VALUES (138, 6, 1);
INSERT INTO order_items VALUES (138, 5, 5);
INSERT INTO order_items VALUES (140, 2, 1);
INSERT INTO order_items VALUES (140, 5, 1);
INSERT INTO order_items VALUES (140, 4, 4);
INSERT INTO order_items VALUES (143, 2, 3);
''')
con.commit()
con.close()
PY
