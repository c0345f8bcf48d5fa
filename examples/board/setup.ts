/**
 * What the team board needs of its project: lists (private to their owner unless shared), a
 * `members` collection naming who a list is shared with (by email), and cards that the owner
 * and the members of their list read and move, all through access rules (docs/rules.md).
 */
import { END_USERS, type ExampleSpec } from '../lib/provision.js';

/** The caller owns the card's list, or is one of its members. */
const onMyList = '@collection.lists(id = $outer.list && owner = @auth.id) || @collection.members(list = $outer.list && email = @auth.email)';

export const board: ExampleSpec = {
  project: 'Team board example',
  collections: [
    END_USERS,
    {
      name: 'lists',
      schema: [{ key: 'name', type: 'String', required: true }, { key: 'owner', type: 'String' }],
      // Its owner's; a member reaches a shared list through her membership (below).
      rules: { list: 'owner = @auth.id', create: 'owner = @auth.id', update: 'owner = @auth.id', delete: 'owner = @auth.id' },
      realtime: true,
    },
    {
      name: 'members',
      schema: [
        { key: 'list', type: 'String', required: true },
        { key: 'listName', type: 'String' },
        { key: 'email', type: 'String', required: true },
        { key: 'owner', type: 'String' },
      ],
      // A member sees her memberships, the list's owner all of them; only the owner of the list
      // adds or removes one. (`lists` does not look `members` up: with both lookups and
      // `email = @auth.email`, adding a member answered 500; see the example's README.)
      rules: {
        list: 'email = @auth.email || owner = @auth.id',
        create: 'owner = @auth.id && @collection.lists(id = $outer.list && owner = @auth.id)',
        update: 'owner = @auth.id',
        delete: 'owner = @auth.id',
      },
      realtime: true,
    },
    {
      name: 'cards',
      schema: [
        { key: 'list', type: 'String', required: true },
        { key: 'column', type: 'String', required: true },
        { key: 'text', type: 'String', required: true },
        { key: 'position', type: 'Number' },
      ],
      rules: { list: onMyList, create: onMyList, update: onMyList, delete: onMyList },
      realtime: true,
    },
  ],
};
