-- API tokens may expire: a token minted for a pipeline can be bounded in time, so a leaked one
-- (or one minted from it) stops working by itself. NULL: no expiry.
ALTER TABLE api_token ADD COLUMN expires_at timestamptz;
