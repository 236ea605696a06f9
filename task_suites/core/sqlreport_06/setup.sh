# Build the SQLite database from a fixed script (the script itself is not left behind).
mkdir -p /home/user/data
python3 - <<'PY'
import sqlite3
con = sqlite3.connect('/home/user/data/app.db')
con.executescript('''
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL, signup_date TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price_cents INTEGER NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), order_date TEXT NOT NULL, status TEXT NOT NULL);
CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders(id), product_id INTEGER NOT NULL REFERENCES products(id), quantity INTEGER NOT NULL);
INSERT INTO customers VALUES (1, 'Ada Mensah', 'PE', '2024-03-21');
INSERT INTO customers VALUES (2, 'Ada Mensah', 'PT', '2024-04-24');
INSERT INTO customers VALUES (3, 'Sven Moreau', 'NO', '2024-02-17');
INSERT INTO customers VALUES (4, 'Lena Moreau', 'NO', '2024-01-21');
INSERT INTO customers VALUES (5, 'Wen Ivanova', 'JP', '2024-01-05');
INSERT INTO customers VALUES (6, 'Ada Ivanova', 'JP', '2024-04-18');
INSERT INTO customers VALUES (7, 'Sven Mensah', 'JP', '2024-01-04');
INSERT INTO customers VALUES (8, 'Rosa Haddad', 'KE', '2024-02-09');
INSERT INTO customers VALUES (9, 'Quinn Schmidt', 'KE', '2024-01-10');
INSERT INTO customers VALUES (10, 'Ines Rossi', 'PE', '2024-05-16');
INSERT INTO customers VALUES (11, 'Zoltan Petrov', 'PE', '2024-03-06');
INSERT INTO customers VALUES (12, 'Mateo Mensah', 'KE', '2024-05-26');
INSERT INTO products VALUES (1, 'nimbus', 955);
INSERT INTO products VALUES (2, 'granite', 9970);
INSERT INTO products VALUES (3, 'lumen', 9737);
INSERT INTO products VALUES (4, 'borealis', 4771);
INSERT INTO products VALUES (5, 'harbor', 5963);
INSERT INTO products VALUES (6, 'vertex', 1442);
INSERT INTO orders VALUES (103, 1, '2024-03-17', 'paid');
INSERT INTO orders VALUES (106, 6, '2024-03-08', 'pending');
INSERT INTO orders VALUES (109, 4, '2024-01-25', 'pending');
INSERT INTO orders VALUES (112, 1, '2024-01-23', 'paid');
INSERT INTO orders VALUES (114, 9, '2024-04-01', 'paid');
INSERT INTO orders VALUES (116, 4, '2024-02-16', 'refunded');
INSERT INTO orders VALUES (119, 3, '2024-01-25', 'paid');
INSERT INTO orders VALUES (122, 2, '2024-09-07', 'paid');
INSERT INTO orders VALUES (123, 10, '2024-05-07', 'pending');
INSERT INTO orders VALUES (124, 8, '2024-01-26', 'pending');
INSERT INTO orders VALUES (125, 10, '2024-04-11', 'refunded');
INSERT INTO orders VALUES (127, 6, '2024-02-22', 'pending');
INSERT INTO orders VALUES (129, 2, '2024-04-20', 'pending');
INSERT INTO orders VALUES (131, 3, '2024-06-26', 'paid');
INSERT INTO orders VALUES (132, 10, '2024-05-10', 'paid');
INSERT INTO orders VALUES (133, 5, '2024-02-06', 'paid');
INSERT INTO orders VALUES (134, 1, '2024-08-26', 'paid');
INSERT INTO orders VALUES (135, 5, '2024-06-18', 'paid');
INSERT INTO orders VALUES (137, 2, '2024-03-23', 'paid');
INSERT INTO orders VALUES (140, 1, '2024-03-13', 'paid');
INSERT INTO orders VALUES (142, 8, '2024-05-08', 'refunded');
INSERT INTO orders VALUES (145, 8, '2024-04-21', 'paid');
INSERT INTO orders VALUES (148, 9, '2024-04-07', 'paid');
INSERT INTO orders VALUES (151, 4, '2024-07-18', 'paid');
INSERT INTO orders VALUES (153, 2, '2024-05-10', 'paid');
INSERT INTO order_items VALUES (103, 3, 4);
INSERT INTO order_items VALUES (103, 4, 1);
INSERT INTO order_items VALUES (103, 1, 1);
INSERT INTO order_items VALUES (106, 1, 1);
INSERT INTO order_items VALUES (106, 3, 5);
INSERT INTO order_items VALUES (109, 3, 4);
INSERT INTO order_items VALUES (112, 6, 5);
INSERT INTO order_items VALUES (114, 5, 2);
INSERT INTO order_items VALUES (116, 4, 4);
INSERT INTO order_items VALUES (116, 2, 1);
INSERT INTO order_items VALUES (116, 3, 3);
INSERT INTO order_items VALUES (119, 6, 4);
INSERT INTO order_items VALUES (119, 1, 2);
INSERT INTO order_items VALUES (122, 5, 5);
INSERT INTO order_items VALUES (123, 2, 4);
INSERT INTO order_items VALUES (123, 1, 1);
INSERT INTO order_items VALUES (123, 3, 4);
INSERT INTO order_items VALUES (124, 5, 2);
INSERT INTO order_items VALUES (124, 3, 4);
INSERT INTO order_items VALUES (125, 3, 4);
INSERT INTO order_items VALUES (127, 5, 4);
INSERT INTO order_items VALUES (127, 3, 5);
INSERT INTO order_items VALUES (129, 6, 3);
INSERT INTO order_items VALUES (129, 5, 1);
INSERT INTO order_items VALUES (131, 2, 1);
INSERT INTO order_items VALUES (132, 4, 3);
INSERT INTO order_items VALUES (133, 5, 3);
INSERT INTO order_items VALUES (133, 1, 4);
INSERT INTO order_items VALUES (134, 2, 1);
INSERT INTO order_items VALUES (134, 5, 1);
INSERT INTO order_items VALUES (134, 4, 1);
INSERT INTO order_items VALUES (135, 1, 1);
INSERT INTO order_items VALUES (135, 6, 3);
INSERT INTO order_items VALUES (135, 2, 1);
INSERT INTO order_items VALUES (137, 4, 1);
INSERT INTO order_items VALUES (137, 6, 4);
INSERT INTO order_items VALUES (137, 2, 3);
INSERT INTO order_items VALUES (140, 2, 5);
INSERT INTO order_items VALUES (142, 2, 1);
INSERT INTO order_items VALUES (142, 4, 4);
INSERT INTO order_items VALUES (145, 3, 4);
INSERT INTO order_items VALUES (145, 5, 4);
INSERT INTO order_items VALUES (145, 4, 5);
INSERT INTO order_items VALUES (148, 6, 5);
INSERT INTO order_items VALUES (151, 2, 3);
INSERT INTO order_items VALUES (153, 5, 1);
INSERT INTO order_items VALUES (153, 3, 5);
''')
con.commit()
con.close()
PY
