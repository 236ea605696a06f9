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
INSERT INTO customers VALUES (1, 'Lena Moreau', 'KE', '2024-05-20');
INSERT INTO customers VALUES (2, 'Viktor Ivanova', 'PT', '2024-05-06');
INSERT INTO customers VALUES (3, 'Uma Nakamura', 'KE', '2024-03-06');
INSERT INTO customers VALUES (4, 'Ada Moreau', 'KE', '2024-01-19');
INSERT INTO customers VALUES (5, 'Jonas Okafor', 'KE', '2024-04-04');
INSERT INTO customers VALUES (6, 'Lena Moreau', 'PT', '2024-03-27');
INSERT INTO customers VALUES (7, 'Sven Mensah', 'KE', '2024-04-27');
INSERT INTO customers VALUES (8, 'Tara Larsen', 'PT', '2024-03-22');
INSERT INTO customers VALUES (9, 'Bruno Petrov', 'PE', '2024-03-25');
INSERT INTO products VALUES (1, 'ember', 3240);
INSERT INTO products VALUES (2, 'umbra', 2853);
INSERT INTO products VALUES (3, 'kestrel', 4695);
INSERT INTO products VALUES (4, 'delta', 9922);
INSERT INTO products VALUES (5, 'quartz', 2028);
INSERT INTO products VALUES (6, 'granite', 3977);
INSERT INTO orders VALUES (103, 2, '2024-06-19', 'pending');
INSERT INTO orders VALUES (106, 2, '2024-06-11', 'paid');
INSERT INTO orders VALUES (108, 6, '2024-08-18', 'paid');
INSERT INTO orders VALUES (109, 4, '2024-02-23', 'paid');
INSERT INTO orders VALUES (111, 1, '2024-02-25', 'pending');
INSERT INTO orders VALUES (113, 7, '2024-02-09', 'pending');
INSERT INTO orders VALUES (114, 4, '2024-07-02', 'paid');
INSERT INTO orders VALUES (115, 3, '2024-04-01', 'paid');
INSERT INTO orders VALUES (118, 7, '2024-08-23', 'paid');
INSERT INTO orders VALUES (120, 2, '2024-04-09', 'paid');
INSERT INTO orders VALUES (122, 6, '2024-09-20', 'refunded');
INSERT INTO orders VALUES (125, 3, '2024-06-08', 'paid');
INSERT INTO orders VALUES (128, 7, '2024-04-27', 'paid');
INSERT INTO orders VALUES (131, 5, '2024-03-07', 'pending');
INSERT INTO orders VALUES (134, 1, '2024-03-13', 'refunded');
INSERT INTO orders VALUES (136, 3, '2024-03-03', 'paid');
INSERT INTO orders VALUES (137, 7, '2024-09-21', 'pending');
INSERT INTO orders VALUES (139, 4, '2024-06-11', 'paid');
INSERT INTO orders VALUES (141, 1, '2024-06-02', 'paid');
INSERT INTO order_items VALUES (103, 4, 5);
INSERT INTO order_items VALUES (106, 5, 2);
INSERT INTO order_items VALUES (108, 4, 2);
INSERT INTO order_items VALUES (108, 6, 3);
INSERT INTO order_items VALUES (109, 2, 4);
INSERT INTO order_items VALUES (111, 6, 4);
INSERT INTO order_items VALUES (113, 6, 4);
INSERT INTO order_items VALUES (113, 4, 5);
INSERT INTO order_items VALUES (114, 1, 3);
INSERT INTO order_items VALUES (114, 6, 1);
INSERT INTO order_items VALUES (114, 2, 1);
INSERT INTO order_items VALUES (115, 1, 5);
INSERT INTO order_items VALUES (115, 4, 4);
INSERT INTO order_items VALUES (115, 2, 4);
INSERT INTO order_items VALUES (118, 1, 1);
INSERT INTO order_items VALUES (118, 3, 2);
INSERT INTO order_items VALUES (120, 2, 1);
INSERT INTO order_items VALUES (120, 3, 1);
INSERT INTO order_items VALUES (120, 1, 4);
INSERT INTO order_items VALUES (122, 4, 1);
INSERT INTO order_items VALUES (122, 1, 1);
INSERT INTO order_items VALUES (125, 5, 2);
INSERT INTO order_items VALUES (125, 6, 2);
INSERT INTO order_items VALUES (125, 4, 2);
INSERT INTO order_items VALUES (128, 1, 4);
INSERT INTO order_items VALUES (131, 1, 2);
INSERT INTO order_items VALUES (131, 3, 4);
INSERT INTO order_items VALUES (134, 4, 2);
INSERT INTO order_items VALUES (134, 5, 5);
INSERT INTO order_items VALUES (136, 5, 1);
INSERT INTO order_items VALUES (136, 1, 3);
INSERT INTO order_items VALUES (137, 5, 1);
INSERT INTO order_items VALUES (137, 2, 5);
INSERT INTO order_items VALUES (137, 4, 3);
INSERT INTO order_items VALUES (139, 3, 5);
INSERT INTO order_items VALUES (139, 6, 5);
INSERT INTO order_items VALUES (139, 2, 2);
INSERT INTO order_items VALUES (141, 4, 3);
INSERT INTO order_items VALUES (141, 1, 2);
INSERT INTO order_items VALUES (141, 2, 2);
''')
con.commit()
con.close()
PY
