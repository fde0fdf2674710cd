/* The heap benchmark's sqlite3 row: N rows inserted into an indexed table of an in-memory
   database (Debian's libsqlite3) through one prepared statement, a transaction per 1000 rows,
   then a query that reads them back in index order. Every page, row and statement buffer comes
   from malloc, as in a program that uses SQLite for its data. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

static void check(sqlite3* db, int rc, int want) {
  if (rc != want) {
    fprintf(stderr, "sqlite_inserts: %s\n", sqlite3_errmsg(db));
    exit(1);
  }
}

int main(int argc, char** argv) {
  int rows = argc > 1 ? atoi(argv[1]) : 300000;
  sqlite3* db;
  check(db, sqlite3_open(":memory:", &db), SQLITE_OK);
  check(db,
        sqlite3_exec(db,
                     "CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, price REAL);"
                     "CREATE INDEX item_name ON item(name);",
                     NULL, NULL, NULL),
        SQLITE_OK);
  sqlite3_stmt* insert;
  check(db, sqlite3_prepare_v2(db, "INSERT INTO item(name, price) VALUES(?, ?)", -1, &insert, NULL),
        SQLITE_OK);
  char name[64];
  for (int i = 0; i < rows; ++i) {
    if (i % 1000 == 0) check(db, sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    snprintf(name, sizeof name, "item-%08x-%d", (unsigned)(i * 2654435761u), i % 97);
    sqlite3_bind_text(insert, 1, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(insert, 2, i * 0.25);
    check(db, sqlite3_step(insert), SQLITE_DONE);
    sqlite3_reset(insert);
    if (i % 1000 == 999 || i == rows - 1)
      check(db, sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
  }
  sqlite3_finalize(insert);
  sqlite3_stmt* query;
  check(db, sqlite3_prepare_v2(db, "SELECT name, price FROM item ORDER BY name", -1, &query, NULL),
        SQLITE_OK);
  double sum = 0;
  int seen = 0;
  while (sqlite3_step(query) == SQLITE_ROW) {
    sum += sqlite3_column_double(query, 1);
    ++seen;
  }
  sqlite3_finalize(query);
  sqlite3_close(db);
  printf("%d rows, sum %.2f\n", seen, sum);
  return seen == rows ? 0 : 1;
}
