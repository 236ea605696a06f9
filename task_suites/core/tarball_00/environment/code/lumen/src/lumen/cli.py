def main():
    print('hello')
