/**
 * The rule grammar and its compiler: what a developer gets back for a rule it refuses (the
 * position), and that nothing of a rule's text reaches SQL except as a quoted literal.
 */
import { describe, expect, it } from 'vitest';
import type { FieldDef } from '../../../src/db/types.js';
import { compileRuleText } from '../../../src/modules/rules/rule.js';
import type { CompileContext, RuleAction } from '../../../src/modules/rules/compile.js';
import { AppError } from '../../../src/lib/errors.js';

const posts: FieldDef[] = [
  { key: 'title', type: 'String' },
  { key: 'published', type: 'Boolean' },
  { key: 'author', type: 'String' },
  { key: 'views', type: 'Number' },
  { key: 'meta', type: 'Object', fields: [{ key: 'lang', type: 'String' }] },
];
const ctx = (action: RuleAction = 'list'): CompileContext => ({
  collection: { id: 'aaaaaaaaaaaaaaaaaaaaaaaa', fields: posts },
  action,
  lookup: (name) => (name === 'members' ? { id: 'bbbbbbbbbbbbbbbbbbbbbbbb', fields: [{ key: 'list', type: 'String' }, { key: 'user', type: 'String' }] } : undefined),
  userFields: [{ key: 'role', type: 'String' }],
});
const compile = (rule: string, action?: RuleAction) => compileRuleText(rule, ctx(action));
function refusal(rule: string, action?: RuleAction) {
  try {
    compile(rule, action);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    const e = err as AppError;
    return { status: e.status, code: e.code, message: e.message, position: e.extra.position };
  }
  throw new Error(`rule was accepted: ${rule}`);
}

describe('rules grammar', () => {
  it('compiles the blog-drafts rule to the indexed accessors and the scope functions', () => {
    expect(compile('published = true || author = @auth.id')).toBe(
      "(plinth_txt(\"data\", 'published') = 'true' OR (plinth_key(\"data\", 'author') = left(plinth_user_id(), 200) AND plinth_txt(\"data\", 'author') = plinth_user_id()))",
    );
  });

  it('compiles a membership lookup as EXISTS over the other partition of the same project', () => {
    expect(compile('@collection.members(list = $outer.id && user = @auth.id)')).toBe(
      'EXISTS (SELECT 1 FROM "documents_bbbbbbbbbbbbbbbbbbbbbbbb" "l1" WHERE "l1".project_id = plinth_project_id() AND "l1".deleted_at IS NULL AND ' +
        "(((plinth_key(\"l1\".\"data\", 'list') = left(\"documents_aaaaaaaaaaaaaaaaaaaaaaaa\".\"id\", 200) AND plinth_txt(\"l1\".\"data\", 'list') = \"documents_aaaaaaaaaaaaaaaaaaaaaaaa\".\"id\") AND " +
        "(plinth_key(\"l1\".\"data\", 'user') = left(plinth_user_id(), 200) AND plinth_txt(\"l1\".\"data\", 'user') = plinth_user_id()))))",
    );
  });

  it('reads @auth.<field> of the users collection once per statement', () => {
    expect(compile('@auth.role in ["editor", "admin"]')).toBe("plinth_txt((SELECT plinth_auth_user()), 'role') IN ('editor', 'admin')");
  });

  it('handles null checks, negation, numbers, nested fields, exists and the key kind', () => {
    expect(compile('author = null')).toBe("plinth_txt(\"data\", 'author') IS NULL");
    expect(compile('!(views > 10)')).toBe("(NOT coalesce(plinth_num(\"data\", 'views') > '10'::float8, false))");
    expect(compile('meta.lang != "en"')).toBe("plinth_txt((\"data\" #> '{\"meta\"}'), 'lang') <> 'en'");
    expect(compile('exists @auth.id && @request.key = "publishable"')).toBe("(plinth_user_id() IS NOT NULL AND plinth_key_kind() = 'publishable')");
    expect(compile('createdAt > "2026-01-01"')).toBe("\"created_at\" > '2026-01-01T00:00:00.000Z'::timestamptz");
  });

  it('a string literal carrying SQL stays one quoted literal', () => {
    const out = compile(`title = "x' OR 1=1; DROP TABLE documents; --"`);
    expect(out).toBe("(plinth_key(\"data\", 'title') = left('x'' OR 1=1; DROP TABLE documents; --', 200) AND plinth_txt(\"data\", 'title') = 'x'' OR 1=1; DROP TABLE documents; --')");
    expect(compile('title = "a\\\\\' b"')).toContain("E'a\\\\'' b'");
  });

  it('refuses SQL written into the rule, with the position', () => {
    expect(refusal("published = true; DROP TABLE documents")).toMatchObject({ status: 400, code: 'rule_invalid', position: 17 });
    expect(refusal("author = @auth.id OR 1=1")).toMatchObject({ position: 19 });
    expect(refusal("title = 'x' -- comment")).toMatchObject({ position: 13 });
  });

  it('refuses function calls, whatever the name', () => {
    expect(refusal('pg_sleep(10) = 1')).toMatchObject({ position: 9, message: expect.stringContaining('Function calls are not allowed') });
    expect(refusal('title = lower(title)')).toMatchObject({ position: 14 });
    expect(refusal('author = @auth.id && plinth_user_id() = author').position).toBe(36);
  });

  it('refuses unknown fields, collections and mismatched types at their position', () => {
    expect(refusal('secret = 1')).toMatchObject({ position: 1, message: expect.stringContaining("Unknown field 'secret'") });
    expect(refusal('published = true && nope = "x"').position).toBe(21);
    expect(refusal('@collection.ghosts(user = @auth.id)').position).toBe(1);
    expect(refusal('views = "ten"').position).toBe(9);
    expect(refusal('@auth.password = "x"').position).toBe(1);
    expect(refusal('@auth.nickname = "x"').position).toBe(1);
    expect(refusal('@data.title = "x"', 'list').message).toContain('@data is only available in create and update rules');
    expect(refusal('$outer.id = id').message).toContain('only meaningful inside @collection');
    expect(refusal('published = ').position).toBe(13);
    expect(refusal('"unterminated').position).toBe(1);
  });
});

describe('the users collection (app_users rows)', () => {
  const usersFields: FieldDef[] = [
    { key: 'email', type: 'String', required: true },
    { key: 'password', type: 'String', required: true },
    { key: 'username', type: 'String' },
    { key: 'role', type: 'String', readOnly: true },
    { key: 'phone', type: 'String', hidden: 'owner' },
  ];
  const users = { id: 'cccccccccccccccccccccccc', fields: usersFields, users: true };
  const usersCtx = (action: RuleAction = 'view'): CompileContext => ({ collection: users, action, lookup: (n) => (n === 'users' ? users : undefined), userFields: usersFields });

  it('compiles the worked example against app_users: columns, data, the caller\'s row', () => {
    expect(compileRuleText('id = @auth.id || @auth.role = "admin"', usersCtx())).toBe(
      "(\"id\" = plinth_user_id() OR plinth_txt((SELECT plinth_auth_user()), 'role') = 'admin')",
    );
    expect(compileRuleText('email = @auth.email && username = "zoë"', usersCtx())).toBe(
      "(\"email\" = plinth_txt((SELECT plinth_auth_user()), 'email') AND plinth_txt(\"data\", 'username') = 'zoë')",
    );
  });

  it('refuses the password and hidden fields, in the users rules and through @auth', () => {
    const refused = (rule: string, c: CompileContext) => {
      try {
        compileRuleText(rule, c);
      } catch (err) {
        return (err as AppError).extra;
      }
      throw new Error(`accepted: ${rule}`);
    };
    expect(refused('password = "hunter2"', usersCtx())).toMatchObject({ action: 'view', position: 1 });
    expect(refused('id = @auth.id || phone = "1"', usersCtx())).toMatchObject({ position: 18 });
    expect(refused('@auth.phone = "1"', { ...ctx(), userFields: usersFields })).toMatchObject({ position: 1 });
  });

  it('a lookup into users reads app_users of the scoped project, not a partition', () => {
    const c: CompileContext = { ...ctx(), lookup: (n) => (n === 'users' ? users : undefined) };
    const out = compileRuleText('@collection.users(id = $outer.author && role = "editor")', c);
    expect(out).toMatch(/^EXISTS \(SELECT 1 FROM "app_users" "l1" WHERE "l1"\.project_id = plinth_project_id\(\) AND \(/);
    expect(out).toContain("plinth_txt(\"documents_aaaaaaaaaaaaaaaaaaaaaaaa\".\"data\", 'author') = \"l1\".\"id\"");
    expect(out).toContain("plinth_txt(\"l1\".\"data\", 'role') = 'editor'");
    expect(out).not.toContain('documents_cccccccccccccccccccccccc');
  });
});

describe('@auth.claims: the custom claims of the caller’s token', () => {
  const C = '(SELECT plinth_claims())';
  it('compiles a claim against a string, a field, a number, a Boolean, null and a list, once per statement', () => {
    expect(compile('@auth.claims.team = "blue"')).toBe(`plinth_txt(${C}, 'team') = 'blue'`);
    // An indexed String field: its index prefix too, as for @auth.id.
    expect(compile('author = @auth.claims.team')).toBe(`(plinth_key("data", 'author') = left(plinth_txt(${C}, 'team'), 200) AND plinth_txt("data", 'author') = plinth_txt(${C}, 'team'))`);
    expect(compile('views <= @auth.claims.quota')).toBe(`plinth_num("data", 'views') <= plinth_num(${C}, 'quota')`);
    expect(compile('@auth.claims.pro = true && published = @auth.claims.open')).toBe(`(plinth_txt(${C}, 'pro') = 'true' AND plinth_txt("data", 'published') = plinth_txt(${C}, 'open'))`);
    expect(compile('@auth.claims.team != null')).toBe(`plinth_txt(${C}, 'team') IS NOT NULL`);
    expect(compile('exists @auth.claims.team')).toBe(`plinth_txt(${C}, 'team') IS NOT NULL`);
    expect(compile('@auth.claims.level in [1, 2]')).toBe(`plinth_num(${C}, 'level') IN ('1'::float8, '2'::float8)`);
    expect(compile('@auth.claims.org.id = @auth.claims.team')).toBe(`plinth_txt((${C} #> '{"org"}'), 'id') = plinth_txt(${C}, 'team')`);
    expect(compile('@auth.claims.team = "x\' OR true --"')).toBe(`plinth_txt(${C}, 'team') = 'x'' OR true --'`);
  });

  it('refuses the names a token-claims function may not write, dates, mixed lists and anything but a name', () => {
    expect(refusal('@auth.claims.__proto__ = "x"')).toMatchObject({ status: 400, code: 'rule_invalid', position: 1 });
    expect(refusal('@auth.claims.constructor = "x"').message).toContain("'constructor' cannot be a claim name");
    expect(refusal('@auth.claims.team.prototype = "x"').position).toBe(1);
    expect(refusal(`@auth.claims.${'a'.repeat(101)} = "x"`).position).toBe(1);
    expect(refusal('createdAt > @auth.claims.since').message).toContain('A claim cannot be compared with a date');
    expect(refusal('@auth.claims.level in [1, "2"]').position).toBe(27);
    expect(refusal("@auth.claims.'team' = \"x\"").position).toBe(14);
    expect(refusal('@auth.claims.te-am = "x"').position).toBe(16);
    expect(refusal('@auth.claims.team"; DROP TABLE x = 1').position).toBe(18);
    expect(refusal('@auth.claims.a.b.c.d.e.f.g.h = 1').message).toContain('at most 8 parts');
    // Without a name it is a users field called `claims`, which this project does not declare.
    expect(refusal('@auth.claims = "x"').message).toContain("Unknown field '@auth.claims'");
  });
});
