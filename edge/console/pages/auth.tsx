import type { Child } from "hono/jsx";

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

/** A signed-out form: its fields, one submit button, and the links to the other forms below it. */
function AuthForm(props: { id: string; submit: string; links: Child; children: Child }) {
  return (
    <section class="narrow">
      <form id={props.id} class="card" novalidate>
        {props.children}
        <p><button type="submit">{props.submit}</button></p>
      </form>
      <p>{props.links}</p>
    </section>
  );
}

export function SignIn() {
  return (
    <AuthForm id="signin-form" submit="Sign in" links={<><a href="/console/forgot">Forgot your password?</a> · <a href="/console/signup">Create an account</a></>}>
      <Email autocomplete="username" />
      <Password id="password" label="Password" autocomplete="current-password" />
    </AuthForm>
  );
}

export function SignUp() {
  return (
    <AuthForm id="signup-form" submit="Create account" links={<>Already registered? <a href="/console/signin">Sign in</a></>}>
      <Email autocomplete="username" />
      <Password id="password" label="Password" autocomplete="new-password" />
    </AuthForm>
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
    <AuthForm id="forgot-form" submit="Send a reset link" links={<a href="/console/signin">Back to sign in</a>}>
      <Email autocomplete="username" />
    </AuthForm>
  );
}

/** The form is hidden, and the notice shown, when the link is found dead on load. */
export function Reset() {
  return (
    <>
      <section id="reset-dead" class="narrow" hidden>
        <p class="card">This reset link has expired or was already used (a link works once, for an hour).</p>
        <p><a class="button" href="/console/forgot">Ask for a new link</a> · <a href="/console/signin">Back to sign in</a></p>
      </section>
      <AuthForm id="reset-form" submit="Set password" links={<a href="/console/signin">Back to sign in</a>}>
        <Password id="password" label="New password" autocomplete="new-password" />
      </AuthForm>
    </>
  );
}
