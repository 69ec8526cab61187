"""Store backends other than SQLite (PostgreSQL); copying sessions between stores is
:mod:`benchlab.store.copy` (it reads and writes through the Store, above the backends).

Nothing here is imported unless asked for: ``postgres`` needs psycopg, which loads only when a
``postgresql://`` URL is opened.
"""
