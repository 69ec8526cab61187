"""Store backends other than SQLite (PostgreSQL), and copying sessions between stores.

Nothing here is imported unless asked for: ``postgres`` needs psycopg, which loads only when a
``postgresql://`` URL is opened.
"""
