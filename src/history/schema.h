// The history database's schema, versioned: hotline_meta holds `schema_version`, and each
// version's migration brings a database from the one before. docs/history.md shows the tables.
#pragma once

#include "base/status.h"
#include "history/database.h"

namespace hotline::history {

constexpr int kSchemaVersion = 2;

// Makes the schema in an empty database, or migrates one of an older version, in one write
// transaction (so two processes doing it at once do it once). Refuses a database that holds
// other tables and is not hotline's, and one of a newer version than this hotline knows.
// `version` below kSchemaVersion stops there: for testing migrations.
Status PrepareSchema(Database& db, int version = kSchemaVersion);

}  // namespace hotline::history
