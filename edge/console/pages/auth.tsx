/** The signed-out pages: each a plain form the browser script submits to /console/api/auth/*. */

function Email(props: { autocomplete: string }) {
  return (
    <p class="field">
      <label for="email">Email</label>
      <input id="email" name="email" type="email" required maxlength={254} autocomplete={props.autocomplete} />
    </p>
  );
}

function Password(props: { id: string; label: string; autocomplete: "current-password" | "new-password" }) {
  const hint = props.autocomplete === "new-password" ? `${props.id}-hint` : undefined;
  return (
    <p class="field">
      <label for={props.id}>{props.label}</label>
      <input id={props.id} name={props.id} type="password" required minlength={props.autocomplete === "new-password" ? 10 : undefined} maxlength={256} autocomplete={props.autocomplete} aria-describedby={hint} />
      {hint && <span id={hint} class="hint">At least 10 characters.</span>}
    </p>
  );
}

export function SignIn() {
  return (
    <section class="narrow">
      <form id="signin-form" class="card" novalidate>
        <Email autocomplete="username" />
        <Password id="password" label="Password" autocomplete="current-password" />
        <p><button type="submit">Sign in</button></p>
      </form>
      <p><a href="/console/forgot">Forgot your password?</a> · <a href="/console/signup">Create an account</a></p>
    </section>
  );
}

export function SignUp() {
  return (
    <section class="narrow">
      <form id="signup-form" class="card" novalidate>
        <Email autocomplete="username" />
        <Password id="password" label="Password" autocomplete="new-password" />
        <p><button type="submit">Create account</button></p>
      </form>
      <p>Already registered? <a href="/console/signin">Sign in</a></p>
    </section>
  );
}

export function Verify() {
  return (
    <section class="narrow">
      <p id="verify-status">Checking your link…</p>
      <p><a href="/console/signin">Sign in</a></p>
    </section>
  );
}

export function Forgot() {
  return (
    <section class="narrow">
      <form id="forgot-form" class="card" novalidate>
        <Email autocomplete="username" />
        <p><button type="submit">Send a reset link</button></p>
      </form>
      <p><a href="/console/signin">Back to sign in</a></p>
    </section>
  );
}

export function Reset() {
  return (
    <section class="narrow">
      <form id="reset-form" class="card" novalidate>
        <Password id="password" label="New password" autocomplete="new-password" />
        <p><button type="submit">Set password</button></p>
      </form>
      <p><a href="/console/signin">Back to sign in</a></p>
    </section>
  );
}
