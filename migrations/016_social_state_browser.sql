-- Up Migration
-- OAuth state bound to the browser that started the flow (login CSRF): the starting browser
-- gets a short-lived HttpOnly cookie with a random key, whose SHA-256 is kept with the state
-- (src/modules/social/cookie.ts). States in flight when this runs (at most 10 minutes old)
-- have no key and could never finish: they are dropped, and those sign-ins start again.
DELETE FROM social_states;
ALTER TABLE social_states ADD COLUMN browser_hash text NOT NULL;
