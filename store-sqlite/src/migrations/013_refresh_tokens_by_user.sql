-- Ending every session of a user (a password changed or reset, an account deactivated) revokes
-- that user's refresh tokens: without this index each of those writes scanned the whole table,
-- which grows with every login and token refresh.
CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id);
