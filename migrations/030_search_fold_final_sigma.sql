-- Up Migration
-- Full-text search folds Greek final sigma: `ΚΌΣΜΟΣ` lower-cases to `κόσμοσ` (Unicode's simple
-- case mapping has one lower case of Σ), while the word as written ends in ς (`κόσμος`), so a
-- search in capitals missed it with the `simple` configuration, and a search in lower case missed
-- a document written in capitals. plinth_fold (migration 021) now maps ς to σ after lower-casing.
-- It folds both sides, the document's vector (plinth_tsv) and the query (src/modules/data/where.ts),
-- so the one function change covers both. CREATE OR REPLACE keeps its grants.
DO $do$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'pg_c_utf8') THEN
    CREATE OR REPLACE FUNCTION plinth_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      RETURN translate(lower(t COLLATE pg_c_utf8), 'ς', 'σ');
  ELSE
    CREATE OR REPLACE FUNCTION plinth_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      RETURN translate(lower(t), 'ς', 'σ');
  END IF;
END
$do$;

-- Stored vectors folded the old way are rebuilt: exactly those holding a lexeme with ς (a
-- configuration that stems Greek, `greek`, already maps ς to σ; no other lexeme changes). Only
-- the partitions of searchable collections are read: those with a search trigger
-- (`ds_<collectionId>`, src/modules/collections/search-index-queries.ts), whose arguments are the
-- collection's language, then its searchable keys (pg_trigger.tgargs: each ends with a zero byte).
-- The vector is set directly; a streaming collection's change trigger (plinth_record_change,
-- sql/70_change_stream.sql) is off meanwhile, inside this transaction only, so that a rebuilt
-- index is not announced to realtime clients as an update of every document it touched.
DO $do$
DECLARE
  t record;
  args text[];
  pos int;
  quiet text[];
  trig text;
BEGIN
  FOR t IN
    SELECT tg.tgrelid::regclass AS part, tg.tgargs FROM pg_trigger tg
     WHERE NOT tg.tgisinternal AND tg.tgname LIKE 'ds\_%' AND tg.tgfoid = 'plinth_search_vector'::regproc
  LOOP
    args := '{}';
    pos := 0;
    FOR i IN 0 .. length(t.tgargs) - 1 LOOP
      IF get_byte(t.tgargs, i) = 0 THEN
        args := args || convert_from(substring(t.tgargs FROM pos + 1 FOR i - pos), 'UTF8');
        pos := i + 1;
      END IF;
    END LOOP;
    quiet := ARRAY(SELECT tg.tgname::text FROM pg_trigger tg
                    WHERE tg.tgrelid = t.part AND tg.tgfoid = to_regproc('plinth_record_change') AND tg.tgenabled <> 'D');
    FOREACH trig IN ARRAY quiet LOOP
      EXECUTE format('ALTER TABLE %s DISABLE TRIGGER %I', t.part, trig);
    END LOOP;
    EXECUTE format('UPDATE %s SET search_vector = plinth_tsv(data, $1, $2::regconfig) WHERE search_vector::text LIKE %L',
                   t.part, '%ς%')
      USING args[2:], args[1];
    FOREACH trig IN ARRAY quiet LOOP
      EXECUTE format('ALTER TABLE %s ENABLE TRIGGER %I', t.part, trig);
    END LOOP;
  END LOOP;
END
$do$;

-- Down Migration
DO $do$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'pg_c_utf8') THEN
    CREATE OR REPLACE FUNCTION plinth_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      RETURN lower(t COLLATE pg_c_utf8);
  ELSE
    CREATE OR REPLACE FUNCTION plinth_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      RETURN lower(t);
  END IF;
END
$do$;
