-- Up Migration
-- A guest linking a social or OpenID Connect identity to its own user id (issue 38,
-- src/modules/social/link.ts, docs/auth.md "Anonymous users"). The state of a link flow names
-- the user it links to (social_states.link_user_id, added by migration 055) and is bound to
-- that user, not to a browser: the app finishes the flow with the user's own access token (a
-- link is started by an API call, which cannot give the browser that goes to the provider a
-- first-party cookie). Such a state has no browser key. A sign-in state without one could
-- never finish (the callback refuses a missing key), so the column may now be NULL.
ALTER TABLE social_states ALTER COLUMN browser_hash DROP NOT NULL;
-- ...but only a link state: every sign-in state keeps its browser key.
ALTER TABLE social_states ADD CONSTRAINT social_states_browser_or_link CHECK (browser_hash IS NOT NULL OR link_user_id IS NOT NULL);

-- Down Migration
ALTER TABLE social_states DROP CONSTRAINT social_states_browser_or_link;
DELETE FROM social_states WHERE browser_hash IS NULL;
ALTER TABLE social_states ALTER COLUMN browser_hash SET NOT NULL;
