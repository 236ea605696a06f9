# Build the SQLite database from a fixed script (the script itself is not left behind).
mkdir -p /home/user/var/lib/shop
python3 - <<'PY'
import sqlite3
con = sqlite3.connect('/home/user/var/lib/shop/store.sqlite')
con.executescript('''
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL, signup_date TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price_cents INTEGER NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), order_date TEXT NOT NULL, status TEXT NOT NULL);
CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders(id), product_id INTEGER NOT NULL REFERENCES products(id), quantity INTEGER NOT NULL);
INSERT INTO customers VALUES (1, 'Rosa Silva', 'NO', '2024-02-20');
INSERT INTO customers VALUES (2, 'Omar Silva', 'PT', '2024-05-07');
INSERT INTO customers VALUES (3, 'Chen Silva', 'PT', '2024-02-11');
INSERT INTO customers VALUES (4, 'Hana Nakamura', 'PE', '2024-04-19');
INSERT INTO customers VALUES (5, 'Omar Nakamura', 'PE', '2024-05-18');
INSERT INTO customers VALUES (6, 'Tara Ivanova', 'KE', '2024-02-15');
INSERT INTO customers VALUES (7, 'Hana Moreau', 'PE', '2024-03-19');
INSERT INTO customers VALUES (8, 'Zoltan Novak', 'NO', '2024-05-23');
INSERT INTO customers VALUES (9, 'Petra Weber', 'KE', '2024-04-12');
INSERT INTO customers VALUES (10, 'Quinn Tanaka', 'NO', '2024-01-22');
INSERT INTO customers VALUES (11, 'Bruno Moreau', 'PE', '2024-01-11');
INSERT INTO customers VALUES (12, 'Ada Larsen', 'KE', '2024-01-01');
INSERT INTO products VALUES (1, 'harbor', 8235);
INSERT INTO products VALUES (2, 'quartz', 7105);
INSERT INTO products VALUES (3, 'falcon', 4269);
INSERT INTO products VALUES (4, 'iris', 9640);
INSERT INTO products VALUES (5, 'kestrel', 6926);
INSERT INTO products VALUES (6, 'raven', 1662);
INSERT INTO orders VALUES (103, 9, '2024-08-02', 'paid');
INSERT INTO orders VALUES (104, 7, '2024-01-12', 'pending');
INSERT INTO orders VALUES (107, 3, '2024-09-19', 'paid');
INSERT INTO orders VALUES (109, 3, '2024-05-20', 'paid');
INSERT INTO orders VALUES (110, 6, '2024-02-11', 'pending');
INSERT INTO orders VALUES (112, 3, '2024-09-20', 'paid');
INSERT INTO orders VALUES (115, 7, '2024-07-03', 'paid');
INSERT INTO orders VALUES (116, 1, '2024-01-13', 'paid');
INSERT INTO orders VALUES (117, 1, '2024-06-02', 'paid');
INSERT INTO orders VALUES (120, 10, '2024-03-19', 'paid');
INSERT INTO orders VALUES (123, 4, '2024-07-24', 'pending');
INSERT INTO orders VALUES (124, 5, '2024-09-06', 'paid');
INSERT INTO orders VALUES (125, 3, '2024-02-27', 'paid');
INSERT INTO orders VALUES (128, 4, '2024-07-15', 'pending');
INSERT INTO orders VALUES (131, 7, '2024-01-17', 'paid');
INSERT INTO orders VALUES (134, 3, '2024-04-14', 'refunded');
INSERT INTO orders VALUES (136, 5, '2024-06-23', 'paid');
INSERT INTO orders VALUES (139, 3, '2024-01-27', 'paid');
INSERT INTO orders VALUES (141, 2, '2024-03-28', 'paid');
INSERT INTO orders VALUES (142, 4, '2024-03-05', 'refunded');
INSERT INTO orders VALUES (144, 3, '2024-01-24', 'pending');
INSERT INTO order_items VALUES (103, 4, 2);
INSERT INTO order_items VALUES (104, 4, 4);
INSERT INTO order_items VALUES (104, 2, 1);
INSERT INTO order_items VALUES (107, 6, 3);
INSERT INTO order_items VALUES (109, 1, 3);
INSERT INTO order_items VALUES (110, 4, 2);
INSERT INTO order_items VALUES (112, 4, 4);
INSERT INTO order_items VALUES (115, 3, 4);
INSERT INTO order_items VALUES (115, 6, 1);
INSERT INTO order_items VALUES (115, 5, 1);
INSERT INTO order_items VALUES (116, 2, 1);
INSERT INTO order_items VALUES (116, 3, 4);
INSERT INTO order_items VALUES (116, 4, 4);
INSERT INTO order_items VALUES (117, 4, 5);
INSERT INTO order_items VALUES (120, 4, 2);
INSERT INTO order_items VALUES (123, 6, 2);
INSERT INTO order_items VALUES (123, 2, 3);
INSERT INTO order_items VALUES (124, 6, 2);
INSERT INTO order_items VALUES (124, 3, 3);
INSERT INTO order_items VALUES (124, 1, 1);
INSERT INTO order_items VALUES (125, 3, 4);
INSERT INTO order_items VALUES (125, 6, 3);
INSERT INTO order_items VALUES (128, 4, 4);
INSERT INTO order_items VALUES (128, 3, 5);
INSERT INTO order_items VALUES (131, 2, 2);
INSERT INTO order_items VALUES (131, 5, 4);
INSERT INTO order_items VALUES (131, 3, 3);
INSERT INTO order_items VALUES (134, 4, 5);
INSERT INTO order_items VALUES (134, 2, 3);
INSERT INTO order_items VALUES (134, 6, 1);
INSERT INTO order_items VALUES (136, 2, 4);
INSERT INTO order_items VALUES (136, 5, 1);
INSERT INTO order_items VALUES (139, 6, 2);
INSERT INTO order_items VALUES (139, 3, 1);
INSERT INTO order_items VALUES (141, 6, 2);
INSERT INTO order_items VALUES (141, 5, 1);
INSERT INTO order_items VALUES (141, 3, 3);
INSERT INTO order_items VALUES (142, 6, 5);
INSERT INTO order_items VALUES (144, 6, 1);
INSERT INTO order_items VALUES (144, 1, 4);
''')
con.commit()
con.close()
PY
