-- Migration 4: checkouts being completed, for payment recovery (issue 9 item 3). Never edit
-- after it has shipped. Few rows are ever complete_in_progress, so the partial index is tiny;
-- the recovery sweep reads only it. Plain SQL that PostgreSQL runs as well.
CREATE INDEX sessions_complete_in_progress ON sessions (updated_at) WHERE status = 'complete_in_progress';
