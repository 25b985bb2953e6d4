-- The class store's tables, as a new database gets them (classroom/migrations.py creates them, then stores the
-- latest version; an older database is brought here by the migrations instead). Written in SQLite's dialect; on
-- PostgreSQL REAL becomes DOUBLE PRECISION (classroom/database.postgres_ddl). Comments are dropped before the
-- file is split into statements at its semicolons (classroom/migrations.statements).
CREATE TABLE IF NOT EXISTS classes (
    code TEXT PRIMARY KEY,
    token_sha256 TEXT NOT NULL,
    lesson TEXT NOT NULL,
    stop INTEGER NOT NULL,          -- 1-based stop the class is on
    created REAL NOT NULL,          -- unix seconds
    expires REAL NOT NULL,
    teacher_seat TEXT,              -- sha256 of the seat cookie of the browser that started it (NULL: none)
    lesson_source TEXT,             -- the lesson file's text when the class started (used while the file is broken)
    uploads INTEGER NOT NULL DEFAULT 1, -- 0: the teacher turned model uploads off for her students
    class_size INTEGER NOT NULL DEFAULT 40, -- seats admitted without the teacher (she sets it, and may raise it)
    deadline REAL                   -- a self-paced class (homework): no answer from then on (NULL: a live class)
);
CREATE TABLE IF NOT EXISTS teacher_keys (
    code TEXT NOT NULL,
    token_sha256 TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (code, token_sha256)
);
CREATE TABLE IF NOT EXISTS attempts (
    kind TEXT NOT NULL,             -- 'code' or 'password'
    client TEXT NOT NULL,           -- 'ip:...' or 'session:...'
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_by_client ON attempts (kind, client, at);
CREATE TABLE IF NOT EXISTS seats (
    code TEXT NOT NULL,
    student TEXT NOT NULL,          -- the anonymous student id, as in answers
    address TEXT,                   -- sha256 of the client address (the per-address limit); NULL: not counted
    admitted INTEGER NOT NULL,      -- 1: may answer; 0: waits for the teacher (the class or the address was full)
    joined REAL NOT NULL,
    label TEXT,                     -- the seat's short name in the room ('K4': classroom/grouping.seat_label)
    stop INTEGER NOT NULL DEFAULT 1, -- a self-paced class: the furthest stop she has reached (classroom/self_paced.py)
    PRIMARY KEY (code, student)
);
CREATE INDEX IF NOT EXISTS seats_by_address ON seats (code, address);
CREATE TABLE IF NOT EXISTS revealed (
    code TEXT NOT NULL,
    question TEXT NOT NULL,
    PRIMARY KEY (code, question)
);
CREATE TABLE IF NOT EXISTS answers (
    code TEXT NOT NULL,
    question TEXT NOT NULL,
    student TEXT NOT NULL,
    answer TEXT NOT NULL,
    correct INTEGER,                -- 1, 0, or NULL when the right answer is not known
    created REAL NOT NULL,
    late INTEGER NOT NULL DEFAULT 0, -- 1: given after its round closed or the question was revealed (never counted)
    round INTEGER NOT NULL DEFAULT 1, -- peer instruction: 1 alone, 2 after the discussion (one-round questions: 1)
    -- one answer per student, question and round: the first one counts (repeats change nothing)
    PRIMARY KEY (code, question, student, round)
);
CREATE TABLE IF NOT EXISTS phases (
    code TEXT NOT NULL,
    question TEXT NOT NULL,
    mode TEXT NOT NULL,             -- 'one' (one vote) or 'peer' (vote, discuss, vote again)
    phase TEXT NOT NULL,            -- 'round1', 'discussion', 'round2' (revealed: the revealed table)
    discussion_ends REAL,           -- unix seconds the discussion's countdown ends (NULL: no discussion yet)
    shown INTEGER NOT NULL DEFAULT 0, -- 1: the teacher showed round 1's distribution to the room
    group_size INTEGER NOT NULL DEFAULT 0, -- discussion groups by disagreement: 2 pairs, 3 threes (0: none)
    group_seed INTEGER,             -- the seed they were formed with (a new grouping: a new seed)
    PRIMARY KEY (code, question)
);
CREATE TABLE IF NOT EXISTS discussion_groups (
    code TEXT NOT NULL,
    question TEXT NOT NULL,
    student TEXT NOT NULL,          -- a student who voted in round 1 (one who did not has no row: any group)
    grp INTEGER NOT NULL,           -- her group's number in the question's grouping
    PRIMARY KEY (code, question, student)
);
CREATE TABLE IF NOT EXISTS text_moderation (
    code TEXT NOT NULL,
    question TEXT NOT NULL,
    text_key TEXT NOT NULL,         -- a group of text answers: their normalised text (classroom/text_answers.text_key)
    state TEXT NOT NULL,            -- 'approved' (the room reads it after the Reveal) or 'hidden'; no row: waiting
    shown TEXT NOT NULL,            -- the group's text as the teacher approved it: what the room reads
    at REAL NOT NULL,
    PRIMARY KEY (code, question, text_key)
);
CREATE TABLE IF NOT EXISTS projected (
    code TEXT PRIMARY KEY,          -- one item on a class's projector at a time (classroom/showcase.py)
    question TEXT NOT NULL,         -- the question of the class's stop it answers
    stop INTEGER NOT NULL,          -- that stop (a class moved elsewhere shows nothing)
    kind TEXT NOT NULL,             -- 'text' (an approved group), 'cell' (a tap), 'view' (a view's link)
    item TEXT NOT NULL,             -- the text's group key, the cell "query,key", the view's canonical link
    at REAL NOT NULL                -- no student, seat or label is kept with it
);
CREATE TABLE IF NOT EXISTS projections (
    code TEXT NOT NULL,             -- every projection of a class, for its report: what kind, from when to when
    question TEXT NOT NULL,
    kind TEXT NOT NULL,
    shown_at REAL NOT NULL,
    ended_at REAL                   -- NULL while it is up
);
CREATE INDEX IF NOT EXISTS projections_by_class ON projections (code, shown_at);
CREATE TABLE IF NOT EXISTS saved_lessons (
    lesson TEXT NOT NULL,           -- a teacher's lesson id (?lesson=...), never a lesson file's (classroom/saved_lessons.py)
    version INTEGER NOT NULL,       -- 1, 2, ...: each save is a new version; a class keeps the text it started on
    source TEXT NOT NULL,           -- its TOML, as classroom/lessons.parse_lesson reads it (checked before it is stored)
    saved REAL NOT NULL,            -- unix seconds
    PRIMARY KEY (lesson, version)
);
CREATE TABLE IF NOT EXISTS lesson_authors (
    token_sha256 TEXT PRIMARY KEY,  -- a teacher signed in to save lessons: the sha256 of her session's token
    expires REAL NOT NULL,
    seat_sha256 TEXT                -- the sha256 of her browser's seat cookie: a reload there keeps her signed in
);
CREATE TABLE IF NOT EXISTS lesson_drafts (
    seat_sha256 TEXT PRIMARY KEY,   -- a signed-in teacher's browser (its seat cookie's sha256)
    source TEXT NOT NULL,           -- her draft's TOML, as the builder writes it (at most MAX_SOURCE_BYTES)
    lesson TEXT,                    -- the saved lesson it is the next version of, if any
    version INTEGER,
    expires REAL NOT NULL           -- her sign-in's end: the draft goes with it
);
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL        -- one row: the last migration applied (classroom/migrations.py)
);
