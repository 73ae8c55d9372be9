-- What a device may see since its cursor (`records::TxStore::visible_changes`): the office
-- sees every record, so the `seq` index answers it; an officer sees their own records and a
-- coordinator also the transgressions reported at their stand. With only the `seq` index those
-- two had to read every record changed since the cursor — all of them for a new or
-- long-offline device — to keep the few that are theirs. These indexes give each scope its
-- own range on `seq`, so the scan costs the device's own visible changes.
CREATE INDEX records_author_seq ON records (author_user_id, seq);
CREATE INDEX records_stand_transgressions_seq ON records (stand_id, seq)
    WHERE kind = 'transgression';
