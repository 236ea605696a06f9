# Build the SQLite database from a fixed script (the script itself is not left behind).
mkdir -p /home/user/var/lib/shop
python3 - <<'PY'
import sqlite3
con = sqlite3.connect('/home/user/var/lib/shop/app.db')
con.executescript('''
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL, signup_date TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price_cents INTEGER NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), order_date TEXT NOT NULL, status TEXT NOT NULL);
CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders(id), product_id INTEGER NOT NULL REFERENCES products(id), quantity INTEGER NOT NULL);
INSERT INTO customers VALUES (1, 'Viktor Ivanova', 'PT', '2024-02-10');
INSERT INTO customers VALUES (2, 'Lena Larsen', 'PT', '2024-03-10');
INSERT INTO customers VALUES (3, 'Petra Mensah', 'NO', '2024-01-14');
INSERT INTO customers VALUES (4, 'Hana Mensah', 'PE', '2024-01-04');
INSERT INTO customers VALUES (5, 'Ada Schmidt', 'KE', '2024-05-06');
INSERT INTO customers VALUES (6, 'Omar Nakamura', 'NO', '2024-04-11');
INSERT INTO customers VALUES (7, 'Wen Ivanova', 'PE', '2024-04-16');
INSERT INTO customers VALUES (8, 'Petra Novak', 'JP', '2024-03-13');
INSERT INTO customers VALUES (9, 'Zoltan Moreau', 'PE', '2024-05-20');
INSERT INTO customers VALUES (10, 'Fatima Ivanova', 'PT', '2024-05-02');
INSERT INTO customers VALUES (11, 'Viktor Larsen', 'PT', '2024-05-03');
INSERT INTO customers VALUES (12, 'Rosa Haddad', 'PT', '2024-01-01');
INSERT INTO customers VALUES (13, 'Uma Tanaka', 'KE', '2024-05-13');
INSERT INTO products VALUES (1, 'iris', 4867);
INSERT INTO products VALUES (2, 'granite', 688);
INSERT INTO products VALUES (3, 'pioneer', 9817);
INSERT INTO products VALUES (4, 'borealis', 4793);
INSERT INTO products VALUES (5, 'willow', 3978);
INSERT INTO products VALUES (6, 'orchid', 3146);
INSERT INTO orders VALUES (103, 5, '2024-03-20', 'paid');
INSERT INTO orders VALUES (104, 2, '2024-05-03', 'pending');
INSERT INTO orders VALUES (107, 8, '2024-05-27', 'refunded');
INSERT INTO orders VALUES (109, 5, '2024-06-28', 'paid');
INSERT INTO orders VALUES (111, 1, '2024-04-14', 'paid');
INSERT INTO orders VALUES (114, 6, '2024-01-26', 'refunded');
INSERT INTO orders VALUES (116, 5, '2024-07-04', 'paid');
INSERT INTO orders VALUES (117, 7, '2024-07-14', 'refunded');
INSERT INTO orders VALUES (118, 10, '2024-08-07', 'refunded');
INSERT INTO orders VALUES (120, 8, '2024-04-22', 'refunded');
INSERT INTO orders VALUES (122, 3, '2024-01-25', 'refunded');
INSERT INTO orders VALUES (124, 4, '2024-08-26', 'paid');
INSERT INTO orders VALUES (127, 7, '2024-06-06', 'refunded');
INSERT INTO orders VALUES (129, 10, '2024-05-22', 'paid');
INSERT INTO orders VALUES (131, 8, '2024-06-14', 'paid');
INSERT INTO orders VALUES (133, 4, '2024-03-09', 'paid');
INSERT INTO orders VALUES (136, 6, '2024-04-15', 'refunded');
INSERT INTO orders VALUES (138, 5, '2024-07-20', 'pending');
INSERT INTO orders VALUES (140, 11, '2024-06-01', 'paid');
INSERT INTO orders VALUES (142, 11, '2024-08-23', 'pending');
INSERT INTO order_items VALUES (103, 6, 4);
INSERT INTO order_items VALUES (103, 4, 4);
INSERT INTO order_items VALUES (104, 2, 1);
INSERT INTO order_items VALUES (104, 5, 1);
INSERT INTO order_items VALUES (107, 5, 3);
INSERT INTO order_items VALUES (107, 3, 3);
INSERT INTO order_items VALUES (107, 2, 5);
INSERT INTO order_items VALUES (109, 4, 1);
INSERT INTO order_items VALUES (109, 2, 2);
INSERT INTO order_items VALUES (109, 1, 5);
INSERT INTO order_items VALUES (111, 5, 1);
INSERT INTO order_items VALUES (111, 4, 2);
INSERT INTO order_items VALUES (114, 4, 1);
INSERT INTO order_items VALUES (114, 2, 4);
INSERT INTO order_items VALUES (114, 5, 3);
INSERT INTO order_items VALUES (116, 6, 5);
INSERT INTO order_items VALUES (116, 2, 1);
INSERT INTO order_items VALUES (116, 1, 1);
INSERT INTO order_items VALUES (117, 6, 5);
INSERT INTO order_items VALUES (117, 2, 3);
INSERT INTO order_items VALUES (118, 6, 2);
INSERT INTO order_items VALUES (118, 1, 5);
INSERT INTO order_items VALUES (118, 2, 1);
INSERT INTO order_items VALUES (120, 2, 2);
INSERT INTO order_items VALUES (122, 2, 3);
INSERT INTO order_items VALUES (122, 5, 2);
INSERT INTO order_items VALUES (122, 3, 5);
INSERT INTO order_items VALUES (124, 3, 5);
INSERT INTO order_items VALUES (124, 1, 1);
INSERT INTO order_items VALUES (124, 6, 1);
INSERT INTO order_items VALUES (127, 2, 4);
INSERT INTO order_items VALUES (129, 1, 2);
INSERT INTO order_items VALUES (129, 5, 4);
INSERT INTO order_items VALUES (131, 5, 5);
INSERT INTO order_items VALUES (131, 2, 3);
INSERT INTO order_items VALUES (133, 1, 3);
INSERT INTO order_items VALUES (133, 2, 4);
INSERT INTO order_items VALUES (133, 6, 3);
INSERT INTO order_items VALUES (136, 1, 2);
INSERT INTO order_items VALUES (136, 6, 4);
INSERT INTO order_items VALUES (136, 4, 5);
INSERT INTO order_items VALUES (138, 1, 5);
INSERT INTO order_items VALUES (138, 3, 3);
INSERT INTO order_items VALUES (140, 5, 4);
INSERT INTO order_items VALUES (142, 6, 1);
INSERT INTO order_items VALUES (142, 3, 1);
INSERT INTO order_items VALUES (142, 4, 2);
''')
con.commit()
con.close()
PY
