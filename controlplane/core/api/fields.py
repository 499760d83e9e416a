# Django reports integer ranges per database backend (SQLite's are 64-bit), and drf-spectacular copies them into
# the schema. Pinning PostgreSQL's ranges keeps one OpenAPI document whatever database generates it.
POSITIVE_INT_RANGE = {"min_value": 0, "max_value": 2_147_483_647}
POSITIVE_SMALL_INT_RANGE = {"min_value": 0, "max_value": 32_767}
