/** Error catalogue of server-side functions (docs/functions.md). */
import { defineErrors } from '../../lib/errors.js';

export const FunctionErrors = defineErrors('functions', {
  function_not_found: { status: 404, message: 'Function not found.' },
  function_version_not_found: { status: 404, message: 'No such version of this function.' },
  function_name_taken: { status: 409, message: 'This project already has a function with that name.' },
  function_compile_failed: { status: 400, message: 'The function does not compile.' },
  function_trigger_invalid: { status: 400, message: 'Invalid trigger for this kind of function.' },
  functions_limit: { status: 403, message: 'Too many functions for this project.' },
  function_secrets_limit: { status: 403, message: 'Too many secrets for this project.' },
  function_secret_not_found: { status: 404, message: 'No secret of that name.' },
  // What plinth.data and fetch answer a function (it may catch them; uncaught, they are its error).
  function_host_arguments: { status: 400, message: 'The arguments are too large, too deep or not JSON.' },
  function_host_unknown: { status: 400, message: 'plinth has no such operation.' },
  function_fetch_failed: { status: 502, message: 'fetch failed.' },
  function_mail_limit: { status: 429, message: 'The function sent more mails in this invocation than its kind allows.' },
  function_host_calls_limit: { status: 429, message: 'The function called plinth or fetch more times in this invocation than its kind allows.' },
  function_timers_limit: { status: 429, message: 'The function set more timers in this invocation than allowed.' },
  // A function refused with a status of its own but no well-formed code.
  function_recursion_limit: { status: 409, message: 'Before-hooks writing through plinth.data went more than two levels deep.' },
  function_refused: { status: 400, message: 'The function refused the request.', passthrough: true },
  // What a caller sees when a function fails; the function's own errors keep their status and code.
  function_error: { status: 502, message: 'The function failed.' },
  function_cpu_limit: { status: 504, message: 'The function ran past its CPU time.' },
  function_timeout: { status: 504, message: 'The function did not finish in time.' },
  function_memory_limit: { status: 502, message: 'The function ran out of memory.' },
  function_stack_limit: { status: 502, message: 'The function recursed too deeply.' },
  function_result_invalid: { status: 502, message: 'The function returned something that is not a valid answer.' },
  function_unavailable: { status: 503, message: 'The function could not be run; try again.' },
  function_concurrency_limit: { status: 429, message: 'Too many invocations of this project’s functions at once.' },
  function_rate_limited: { status: 429, message: 'Too many invocations of this project’s functions this minute.' },
});
