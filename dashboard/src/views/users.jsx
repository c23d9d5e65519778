// The tenant's users: who has memories here, how many facts and turns each.
import { useEffect, useRef, useState } from "preact/hooks";
import { href, navigate } from "../router.js";
import { Empty, Loading, Table } from "../ui.jsx";

export function UsersView({ users, params }) {
  const [typed, setTyped] = useState("");
  const box = useRef(null);
  const byId = params && params.get("by") === "id";
  useEffect(() => {
    if (byId && box.current) box.current.focus(); // "Other user…" in the header leads here
  }, [byId]);
  let list;
  if (users.error) list = null; // the shell shows it
  else if (users.loading && !users.data) list = <Loading what="users" />;
  else if (users.data === null)
    list = (
      <p class="muted" data-testid="users-unlisted">
        Listing users needs a key with the <code>admin</code> scope (or a server with{" "}
        <code>GET /v1/users</code>): open one by id.
      </p>
    );
  else if (!users.data.length)
    list = (
      <Empty>
        No users yet. Add memories with <code>POST /v1/memories</code> or run <code>madeleine demo</code>.
      </Empty>
    );
  else
    list = (
      <Table testid="users-table" caption="Users">
        <thead>
          <tr>
            <th>User</th>
            <th class="num">Facts</th>
            <th class="num">Turns</th>
            <th>Open</th>
          </tr>
        </thead>
        <tbody>
          {users.data.map((u) => (
            <tr data-testid="user-row">
              <td>
                <a href={href(["users", u.user_id, "profile"])}>{u.user_id}</a>
              </td>
              <td class="num">{u.facts ?? "—"}</td>
              <td class="num">{u.turns ?? "—"}</td>
              <td class="links">
                <a href={href(["users", u.user_id, "search"])}>search</a>
                <a href={href(["users", u.user_id, "graph"])}>graph</a>
                <a href={href(["users", u.user_id, "timeline"])}>timeline</a>
              </td>
            </tr>
          ))}
        </tbody>
      </Table>
    );
  return (
    <section>
      <h1>Users</h1>
      {list}
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (typed.trim()) navigate(["users", typed.trim(), "profile"]);
        }}
      >
        <label for="open-user">Open a user by id</label>
        <input
          id="open-user"
          ref={box}
          value={typed}
          placeholder="any user id, listed or not"
          onInput={(e) => setTyped(e.currentTarget.value)}
          data-testid="open-user"
        />
        <button type="submit" data-testid="open-user-submit">
          Open
        </button>
      </form>
    </section>
  );
}
