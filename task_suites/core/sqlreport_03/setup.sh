# Build the SQLite database from a fixed script (the script itself is not left behind).
mkdir -p /home/user/srv/app/data
python3 - <<'PY'
import sqlite3
con = sqlite3.connect('/home/user/srv/app/data/shop.db')
con.executescript('''
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL, signup_date TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price_cents INTEGER NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), order_date TEXT NOT NULL, status TEXT NOT NULL);
CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders(id), product_id INTEGER NOT NULL REFERENCES products(id), quantity INTEGER NOT NULL);
INSERT INTO customers VALUES (1, 'Petra Costa', 'PT', '2024-03-26');
INSERT INTO customers VALUES (2, 'Fatima Oliveira', 'JP', '2024-05-04');
INSERT INTO customers VALUES (3, 'Goran Nakamura', 'PT', '2024-01-01');
INSERT INTO customers VALUES (4, 'Goran Weber', 'JP', '2024-01-10');
INSERT INTO customers VALUES (5, 'Goran Nakamura', 'JP', '2024-04-22');
INSERT INTO customers VALUES (6, 'Goran Costa', 'JP', '2024-03-09');
INSERT INTO customers VALUES (7, 'Emeka Moreau', 'JP', '2024-05-07');
INSERT INTO customers VALUES (8, 'Sven Novak', 'KE', '2024-04-04');
INSERT INTO customers VALUES (9, 'Uma Novak', 'PT', '2024-04-20');
INSERT INTO products VALUES (1, 'sierra', 4738);
INSERT INTO products VALUES (2, 'iris', 3515);
INSERT INTO products VALUES (3, 'meridian', 3784);
INSERT INTO products VALUES (4, 'lumen', 4620);
INSERT INTO products VALUES (5, 'orchid', 3473);
INSERT INTO products VALUES (6, 'pioneer', 5668);
INSERT INTO orders VALUES (101, 3, '2024-07-03', 'paid');
INSERT INTO orders VALUES (102, 2, '2024-08-06', 'paid');
INSERT INTO orders VALUES (104, 2, '2024-07-10', 'paid');
INSERT INTO orders VALUES (107, 3, '2024-07-27', 'paid');
INSERT INTO orders VALUES (110, 3, '2024-09-19', 'paid');
INSERT INTO orders VALUES (112, 2, '2024-05-27', 'paid');
INSERT INTO orders VALUES (114, 1, '2024-09-18', 'pending');
INSERT INTO orders VALUES (117, 2, '2024-09-24', 'pending');
INSERT INTO orders VALUES (120, 7, '2024-05-26', 'refunded');
INSERT INTO orders VALUES (122, 3, '2024-01-04', 'pending');
INSERT INTO orders VALUES (124, 2, '2024-03-13', 'paid');
INSERT INTO orders VALUES (125, 6, '2024-09-18', 'pending');
INSERT INTO orders VALUES (126, 1, '2024-09-18', 'paid');
INSERT INTO orders VALUES (129, 5, '2024-02-26', 'pending');
INSERT INTO orders VALUES (130, 1, '2024-07-22', 'paid');
INSERT INTO orders VALUES (133, 7, '2024-07-01', 'paid');
INSERT INTO orders VALUES (135, 6, '2024-04-04', 'refunded');
INSERT INTO orders VALUES (136, 2, '2024-04-17', 'paid');
INSERT INTO orders VALUES (139, 4, '2024-08-07', 'paid');
INSERT INTO orders VALUES (141, 4, '2024-01-02', 'refunded');
INSERT INTO order_items VALUES (101, 2, 3);
INSERT INTO order_items VALUES (102, 3, 4);
INSERT INTO order_items VALUES (102, 5, 3);
INSERT INTO order_items VALUES (102, 4, 5);
INSERT INTO order_items VALUES (104, 3, 5);
INSERT INTO order_items VALUES (104, 6, 4);
INSERT INTO order_items VALUES (104, 4, 5);
INSERT INTO order_items VALUES (107, 6, 3);
INSERT INTO order_items VALUES (107, 4, 2);
INSERT INTO order_items VALUES (110, 5, 3);
INSERT INTO order_items VALUES (110, 1, 1);
INSERT INTO order_items VALUES (110, 6, 5);
INSERT INTO order_items VALUES (112, 1, 4);
INSERT INTO order_items VALUES (114, 2, 3);
INSERT INTO order_items VALUES (117, 6, 4);
INSERT INTO order_items VALUES (120, 3, 2);
INSERT INTO order_items VALUES (120, 5, 5);
INSERT INTO order_items VALUES (122, 5, 5);
INSERT INTO order_items VALUES (122, 1, 1);
INSERT INTO order_items VALUES (124, 1, 5);
INSERT INTO order_items VALUES (125, 6, 3);
INSERT INTO order_items VALUES (125, 1, 2);
INSERT INTO order_items VALUES (125, 3, 3);
INSERT INTO order_items VALUES (126, 3, 5);
INSERT INTO order_items VALUES (126, 1, 3);
INSERT INTO order_items VALUES (129, 4, 4);
INSERT INTO order_items VALUES (130, 4, 3);
INSERT INTO order_items VALUES (130, 2, 5);
INSERT INTO order_items VALUES (130, 5, 1);
INSERT INTO order_items VALUES (133, 3, 1);
INSERT INTO order_items VALUES (133, 1, 3);
INSERT INTO order_items VALUES (135, 5, 1);
INSERT INTO order_items VALUES (135, 2, 4);
INSERT INTO order_items VALUES (135, 4, 3);
INSERT INTO order_items VALUES (136, 2, 3);
INSERT INTO order_items VALUES (139, 4, 4);
INSERT INTO order_items VALUES (141, 1, 1);
''')
con.commit()
con.close()
PY
