/* Generated from the OpenAPI document by web/scripts/api-types.ts (npm run gen:api-types). Do not edit. */

export interface paths {
    "/api/fbl/inbound": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Report a complaint (ARF feedback report)
         * @description Feedback-loop intake. The body is the raw ARF report (RFC 5965): a `multipart/report` with a `message/feedback-report` part and the original as `message/rfc822` or `text/rfc822-headers`, posted as is (any content type, up to 10 MB). The key (`postline fbl-secret`) goes in `X-FBL-Key` or `?key=`, not the API key. The report is matched to the message by the original's Message-ID, else by a signed VERP Original-Mail-From, else by the reported address (Original-Rcpt-To, else the original's To) → the most recent message to it. Matched: the address is suppressed (reason complaint) and a `spam` event recorded, once per message. Every report is stored, matched or not.
         */
        post: operations["reportComplaint"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Verify an API key
         * @description What connectors call to check a key: the account it belongs to and whether it is a live or test key.
         */
        get: operations["getMe"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/account/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Sending health of the account
         * @description Outcomes of the last `days` UTC days (default 7, today included): sent, delivered, bounces, complaints, and the sender-side bounces (receivers refusing our IP, authentication or content) that never suppress a recipient and show here instead, with a status and the issues behind it. The same health as `health` in GET /api/v1/stats (`critical` there is `at_risk`). See docs/bounces.md#account-health.
         */
        get: operations["getAccountHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/deliverability/sources": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Source addresses this account sends from, with their DNS check and warm-up
         * @description The sources of the pools the account's transactional and broadcast mail leave through (docs/sending-identity.md), each with the result of the forward-confirmed reverse DNS check made at start-up (a mismatch is a warning to fix in DNS, not a refusal) and its warm-up progress today. Sources of pools the account does not use are not shown.
         */
        get: operations["listSendingSources"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/delivery/status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Traffic shaping per destination, deployment-wide
         * @description Every destination (provider, relay or MX host set) with activity in the last hour, a suspension or a live connection: connections, messages in flight and sent in the last minute, the limits applied, and a suspension with the throttle reply behind it. The same figures as `postline delivery status --json` and the /metrics gauges. Deployment-wide aggregates, the same for every account; no message, recipient or account appears. See docs/delivery-policy.md.
         */
        get: operations["getDeliveryStatus"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/session": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get the current session
         * @description The signed-in person, their account and the CSRF token to send as X-CSRF-Token on writes. The dashboard calls it on every page load. Session cookie only.
         */
        get: operations["getSession"];
        put?: never;
        /**
         * Sign in
         * @description Signs a person in with email and password, or with a one-time sign-in link token (first start, `postline users reset-password --link`). Sets the HttpOnly, SameSite=Strict session cookie `postline_session` (and `postline_signed_in=1`, readable by the page, holding no secret). Failed attempts are throttled per address (10 per 15 minutes) and per client IP (50 per 15 minutes): past that, 429 with Retry-After.
         */
        post: operations["signIn"];
        /**
         * Sign out
         * @description Ends the session and clears the cookie. Needs X-CSRF-Token like every cookie-authenticated write.
         */
        delete: operations["signOut"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List users
         * @description The people who can sign in to the dashboard for this account, newest first by default; paginate with `limit`, `order` and `cursor`.
         */
        get: operations["listUsers"];
        put?: never;
        /**
         * Create a user
         * @description Adds a person who signs in with this email and password and sees this account. Test key: validated, nothing stored, `sandbox: true`.
         */
        post: operations["createUser"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a user
         * @description One user of this account (never the password hash).
         */
        get: operations["getUser"];
        put?: never;
        post?: never;
        /**
         * Delete a user
         * @description Removes the person and ends their sessions. You cannot delete the user you are signed in as (409). Test key: 204, nothing deleted.
         */
        delete: operations["deleteUser"];
        options?: never;
        head?: never;
        /**
         * Change a user's email or password
         * @description A new password ends the user's other sessions (the one making the change stays signed in). Test key: validated, nothing changed, `sandbox: true`.
         */
        patch: operations["updateUser"];
        trace?: never;
    };
    "/api/v1/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List API keys
         * @description The account's keys, revoked ones included, newest first by default; prefixes only (a key's secret is never shown again). Paginate with `limit`, `order` and `cursor`.
         */
        get: operations["listApiKeys"];
        put?: never;
        /**
         * Create an API key
         * @description A live key, or a test key with `mode: "test"`. The full key is in this response only. Test key: validated, nothing stored, `sandbox: true` (the returned key does not work).
         */
        post: operations["createApiKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/keys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get an API key
         * @description One key of the account: prefix, mode, last use and revocation (never the secret).
         */
        get: operations["getApiKey"];
        put?: never;
        post?: never;
        /**
         * Revoke an API key
         * @description Requests with the key get 401 from now on (other API processes of a multi-process deployment stop accepting it within 5 seconds, the time they may trust a verified key). Revoking twice keeps the first time. A key may revoke itself. Test key: nothing changes, `sandbox: true`.
         */
        delete: operations["revokeApiKey"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/domains": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List sender domains
         * @description Domains of the account with their records and last check results, newest first by default; paginate with `limit`, `order` and `cursor`.
         */
        get: operations["listDomains"];
        put?: never;
        /**
         * Add a sender domain
         * @description Generates an RSA-2048 and an Ed25519 DKIM key (private keys are stored encrypted and never returned) and answers with the DNS records to publish. Then call `POST /api/v1/domains/{id}/verify`.
         */
        post: operations["createDomain"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/domains/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a sender domain
         * @description The domain, the records to publish and the result of the last check of each.
         */
        get: operations["getDomain"];
        put?: never;
        post?: never;
        /**
         * Delete a sender domain
         * @description Removes the domain and its keys. Mail from it is refused from then on (`sender_domain_unverified`); the DNS records may be removed.
         */
        delete: operations["deleteDomain"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/domains/{id}/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Check the DNS records
         * @description Looks every record up through the configured resolver and stores each status (`verified`, `missing`, `mismatch`, `temp_error`). The domain becomes `verified` when its RSA DKIM record matches; once verified it stays so when a later check fails (record statuses still update). The tracking CNAME is checked too.
         */
        post: operations["verifyDomain"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/domains/{id}/tracking/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Check the white-label tracking CNAME
         * @description Checks that `track.<domain>` is a CNAME to the tracking host. Confirmed → `tracking.status` `verified` and new messages from the domain use `http://track.<domain>/` for links, the pixel and the unsubscribe page; absent or pointing elsewhere → `failed` (messages use the default host again). A temporary DNS failure leaves the status as it was.
         */
        post: operations["verifyDomainTracking"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/domains/{id}/mark-verified": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Mark a domain verified without DNS (development servers only)
         * @description Only when the server captures mail instead of delivering it (POSTLINE_DELIVERY=capture): the domain becomes `verified` without a DNS check, so sends from it can be tried locally. Anywhere else 403 `forbidden`.
         */
        post: operations["markDomainVerified"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/emails": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List sent emails */
        get: operations["listEmails"];
        put?: never;
        /**
         * Send an email
         * @description Live key: validates, checks the verified sender domain, the suppression list and the quota, stores the message and answers 202 `queued` (or `scheduled`). Test key: validates and renders only and answers the same 202 with an `sbx_` id and `sandbox: true`; nothing is stored, sent, counted or recorded. `warnings` names placeholders that rendered empty without a fallback; with `strict: true` they are a 422 `template_error` instead.
         */
        post: operations["sendEmail"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/emails/batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send up to 500 emails in one request
         * @description Each item is validated and answered on its own, in order: `{index, id, status…}` when accepted, `{index, error: <problem>}` when not. The accepted ones are stored together.
         */
        post: operations["sendEmailBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/emails/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get an email with its status and event timeline */
        get: operations["getEmail"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/emails/{id}/raw": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The raw RFC 5322 source of an email (message/rfc822)
         * @description Captured mail (POSTLINE_DELIVERY=capture) is answered with the exact bytes kept at send time (`Postline-Source: captured`). Other messages are rebuilt from the stored content through the same build path as delivery (`Postline-Source: rebuilt`): the Message-ID, headers, parts and tracked links are the ones sent; MIME boundaries, Date and the DKIM signature values belong to the rebuild. Any recipient id of a send answers that recipient's copy (its own tracking and unsubscribe links, the send's To and Cc headers).
         */
        get: operations["getEmailRawSource"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/captured": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List captured messages (POSTLINE_DELIVERY=capture) */
        get: operations["listCapturedMessages"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/captured/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The raw RFC 5322 bytes of a captured message (message/rfc822) */
        get: operations["getCapturedMessage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/templates": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List templates
         * @description Templates of the account without their bodies, newest first by default. Filter by `folder` and by `q` (name contains, case-insensitive); paginate with `limit`, `order` and `cursor` (the previous page's `nextCursor`).
         */
        get: operations["listTemplates"];
        put?: never;
        /**
         * Create a template
         * @description Stores a template. Subject, html and text are template-language source (docs/templates.md) and are parsed on save: a syntax error is 422 `template_error` with the field, line and column.
         */
        post: operations["createTemplate"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/templates/folders": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List template folders
         * @description Every folder name in use with the number of templates in it, by name; `folder: null` counts the templates in no folder and comes last. A folder exists while a template is in it.
         */
        get: operations["listTemplateFolders"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/templates/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a template
         * @description The full template, bodies included.
         */
        get: operations["getTemplate"];
        put?: never;
        post?: never;
        /**
         * Delete a template
         * @description Removes the template. Messages already sent from it are not affected.
         */
        delete: operations["deleteTemplate"];
        options?: never;
        head?: never;
        /**
         * Update a template
         * @description Changes the fields given; `null` clears folder, subject, html or text. Same limits and syntax check as on create.
         */
        patch: operations["updateTemplate"];
        trace?: never;
    };
    "/api/v1/templates/{id}/render": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Preview a template
         * @description Renders subject, html and text with the given variables, exactly as a send would (values HTML-escaped in html; no line breaks in the subject); with `subscriberId`, as that subscriber would get it. `warnings` names unknown subscriber fields and placeholders that rendered empty without a fallback. `draft` renders unsaved parts instead of the saved ones (the dashboard editor's live preview). Nothing is sent or stored; a part the template lacks is null.
         */
        post: operations["renderTemplate"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/suppression": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Check an address, or list the suppression list
         * @description With `email`: whether that address is suppressed for this account, always 200 (`suppressed: false` and nulls when it is not; 422 when it is not a valid address). Without `email`: the entries, newest first by default, filtered by `reason` and `q`, paginated with `limit`, `order` and `cursor`.
         */
        get: operations["listSuppressions"];
        put?: never;
        /**
         * Suppress an address (or many)
         * @description `{email, reason}` adds one address: 201 with the entry, or 200 with the existing entry, unchanged, when the address is already suppressed. `{entries: [{email, reason}, …]}` adds up to 10000 in one transaction and answers 200 with counts; if any address is invalid nothing is added and the 422 names each one (`entries.<index>.email`).
         */
        post: operations["createSuppressions"];
        /**
         * Re-subscribe an address
         * @description Removes the address from the suppression list, so mail to it is sent again (and its subscriber records return to active). 404 when it was not suppressed.
         */
        delete: operations["deleteSuppression"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/hooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List webhooks
         * @description The account's hooks without secrets, newest first by default; paginate with `limit`, `order` and `cursor`.
         */
        get: operations["listHooks"];
        put?: never;
        /**
         * Create a webhook
         * @description Subscribes a URL to event types. Events recorded from now on are POSTed in batches of at most 500, in order, signed with `X-SVC-Signature: sha256=<hex HMAC-SHA256 of the raw body>` keyed with `secret`, which is returned only here (see docs/webhooks.md).
         */
        post: operations["createHook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/hooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a webhook
         * @description The hook and its state (the secret is never shown again).
         */
        get: operations["getHook"];
        put?: never;
        post?: never;
        /**
         * Delete a webhook
         * @description Stops deliveries at once; undelivered events and the attempt log are discarded.
         */
        delete: operations["deleteHook"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/hooks/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List delivery attempts
         * @description Every attempt to deliver a batch (and every test send), newest first by default: time, outcome, HTTP status, duration, number of events and the error, if any.
         */
        get: operations["listHookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/hooks/{id}/enable": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Re-enable a disabled webhook
         * @description A hook disabled after a 410 Gone or exhausted retries becomes `active` again: its failure count is reset and the batch that was pending when it was disabled is sent first, at once. Events recorded while it was disabled are not delivered (they were never queued for it). Enabling an active hook changes nothing.
         */
        post: operations["enableHook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/hooks/{id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rotate the signing secret
         * @description Replaces the secret; the next batch is signed with the new one. The new secret is shown only in this response.
         */
        post: operations["rotateHookSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/hooks/{id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a test event
         * @description Sends one signed, made-up event (`data.test: true`) of the hook's first event type now, outside the queue, and returns what the receiver answered. Works on disabled hooks; never changes the hook's state.
         */
        post: operations["testHook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/lists": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List lists
         * @description Newest first by default; `nextCursor` fetches the next page.
         */
        get: operations["listLists"];
        put?: never;
        /**
         * Create a list
         * @description A named group of subscribers. With `doubleOptIn`, new members get a confirmation mail and stay `unconfirmed` until they follow its link.
         */
        post: operations["createList"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/lists/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a list
         * @description The list with its current member count.
         */
        get: operations["getList"];
        put?: never;
        post?: never;
        /**
         * Delete a list
         * @description Removes the list and its memberships; subscribers stay, with their other lists.
         */
        delete: operations["deleteList"];
        options?: never;
        head?: never;
        /**
         * Update a list
         * @description Only the fields given change; null clears description or confirmationTemplateId.
         */
        patch: operations["updateList"];
        trace?: never;
    };
    "/api/v1/subscribers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List subscribers
         * @description Filter by list, status and q (email or name contains). Newest first by default; ids are unique, time-ordered and never reused, so polling connectors (`limit=50&order=desc`) dedupe by id. `nextCursor` pages on; pages stay stable while subscribers are added.
         */
        get: operations["listSubscribers"];
        put?: never;
        /**
         * Create or update a subscriber
         * @description Creates the subscriber (201), or, when the address exists (compared case-insensitively), updates the given fields, merges attributes and adds the lists (200), so connectors can upsert. New members of a double opt-in list are unconfirmed and get a confirmation mail, unless `status` says otherwise. A suppressed address (unsubscribe, complaint, hard bounce) keeps the matching status.
         */
        post: operations["upsertSubscriber"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/subscribers/{idOrEmail}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a subscriber by id or email
         * @description By `sub_…` id, or by address (matched case-insensitively; URL-encode it).
         */
        get: operations["getSubscriber"];
        put?: never;
        post?: never;
        /**
         * Delete a subscriber
         * @description Removes the subscriber and its memberships. A suppression of the address is not touched.
         */
        delete: operations["deleteSubscriber"];
        options?: never;
        head?: never;
        /**
         * Update a subscriber
         * @description Only the fields given change. `list`/`addLists` add memberships, `removeLists` removes them. Setting a status that contradicts a suppression of the address is refused (recipient_suppressed).
         */
        patch: operations["updateSubscriber"];
        trace?: never;
    };
    "/confirm/{token}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Confirm a double opt-in subscription
         * @description Target of the link in confirmation mails. A valid token makes the unconfirmed subscriber active; a forged, altered or expired one answers 404. Answers a small HTML page.
         */
        get: operations["confirmSubscription"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/subscribers/import": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Import subscribers
         * @description Up to 100000 rows into one list, as a background job: answers 202 with the import, whose progress GET /api/v1/imports/{id} shows. Send JSON `{list, subscribers: [...]}` or `{list, csv}`, or a raw `text/csv` body with `?list=`. Existing addresses are updated; invalid rows are skipped and listed by row number.
         */
        post: operations["importSubscribers"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/imports": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List imports
         * @description Newest first by default, with their progress.
         */
        get: operations["listImports"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/imports/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get an import and its progress
         * @description processed / total, created, updated, skipped, and the errors by row; status queued → running → completed (or failed).
         */
        get: operations["getImport"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/segments": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List segments
         * @description Each with its live subscriberCount.
         */
        get: operations["listSegments"];
        put?: never;
        /**
         * Create a segment
         * @description An unknown field or op, or a value of the wrong type, is a 422 naming the condition path.
         */
        post: operations["createSegment"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/segments/count": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Count the subscribers matching unsaved conditions
         * @description Validates `match` and `conditions` exactly as creating a segment does, stores nothing, and answers how many subscribers match now (whatever their status). The dashboard's rule builder calls it as you edit.
         */
        post: operations["countSegment"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/segments/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a segment with its live count
         * @description Membership is computed when asked, never stored: the count is always current.
         */
        get: operations["getSegment"];
        put?: never;
        post?: never;
        /**
         * Delete a segment
         * @description Removes the saved definition; subscribers are not touched.
         */
        delete: operations["deleteSegment"];
        options?: never;
        head?: never;
        /**
         * Update a segment
         * @description Only the fields given change; a new definition is validated like on create.
         */
        patch: operations["updateSegment"];
        trace?: never;
    };
    "/api/v1/segments/{id}/subscribers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a segment's subscribers
         * @description Matching subscribers now, paginated like GET /api/v1/subscribers.
         */
        get: operations["listSegmentSubscribers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/campaigns": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List campaigns
         * @description Newest first by default; filter by `status`. Bodies (html, text) are left out of lists.
         */
        get: operations["listCampaigns"];
        put?: never;
        /**
         * Create a campaign draft
         * @description Validated like POST /api/v1/emails (verified sender domain, no CR/LF, template exists and parses) plus the audience (lists and segment of this account). Merge fields: `{{ subscriber.email }}`, `{{ subscriber.name }}`, `{{ subscriber.attributes.<key> | fallback }}`, the campaign `variables`, `{{ unsubscribe_url }}`. The answer's `warnings` name unknown subscriber fields, attributes no subscriber of the audience has, and names that are not in `variables`.
         */
        post: operations["createCampaign"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/campaigns/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a campaign with its full report
         * @description The definition, status, progress, counts, rates, top links and an hourly timeline. Counters are maintained as events happen (docs/campaigns.md#report).
         */
        get: operations["getCampaign"];
        put?: never;
        post?: never;
        /**
         * Delete a draft or scheduled campaign
         * @description Only while `draft` or `scheduled` (else 409 `invalid_state`; cancel a sending campaign instead).
         */
        delete: operations["deleteCampaign"];
        options?: never;
        head?: never;
        /**
         * Change a draft or scheduled campaign
         * @description Only while `draft` or `scheduled` (else 409 `invalid_state`). The merged definition is validated as a whole.
         */
        patch: operations["updateCampaign"];
        trace?: never;
    };
    "/api/v1/campaigns/{id}/send": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Queue a draft for sending
         * @description 202 `{id, status}`: `sending` now, or `scheduled` when `scheduledAt` is in the future. The definition is checked again and its content frozen. Sending twice (also concurrently) answers 409 `invalid_state` and never sends twice; 409 `account_at_risk` while the account's health is at_risk and not acknowledged; 422 `template_error` (one `errors` entry per placeholder) when the campaign is `strict` and a placeholder has no value and no fallback for the audience.
         */
        post: operations["sendCampaign"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/campaigns/{id}/pause": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Pause a sending campaign
         * @description sending → paused. Unsent messages are held at once (in-flight ones finish); the fan-out stops.
         */
        post: operations["pauseCampaign"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/campaigns/{id}/resume": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Resume a paused campaign
         * @description paused → sending. Held messages are released, spaced by the throttle. 409 `account_at_risk` while health is at_risk and not acknowledged.
         */
        post: operations["resumeCampaign"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/campaigns/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel a campaign
         * @description draft, scheduled, sending or paused → cancelled. Unsent messages are removed and counted as `cancelled`.
         */
        post: operations["cancelCampaign"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/campaigns/{id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send test copies of a campaign
         * @description Rendered copies to up to 5 addresses with a sample subscriber (the first active member of the audience, else a stand-in), subject prefixed `[Test]`. They are ordinary messages (quota, suppression apply), not part of the campaign's report. Any state.
         */
        post: operations["sendCampaignTest"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/campaigns/{id}/preview": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Preview a campaign for one subscriber, with its audience size
         * @description The message as `subscriberId` (an id or address; default: the first active member of the audience) would get it, rendered as delivery renders it, the number of people a send now would reach, and the merge-field warnings. Nothing is stored or sent. Any state.
         */
        get: operations["previewCampaign"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/campaigns/{id}/recipients": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a campaign's recipients and their delivery status
         * @description One row per message, in subscriber id order (`order`, `cursor` as elsewhere); filter by message `status`.
         */
        get: operations["listCampaignRecipients"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Account statistics
         * @description Counts and rates of the account (transactional and campaigns) between two UTC days (default: the last 30 days), for everything, one `tag` or one `campaignId`; the monthly quota; a daily series; and the sending health (ok / warning / at_risk). Read from counters maintained as events happen.
         */
        get: operations["getStats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/stats/health/acknowledge": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Acknowledge an at-risk sending health
         * @description While the health is `at_risk`, campaigns pause and send/resume answer 409 `account_at_risk`. Acknowledging (after fixing the list) lets campaigns send again for the rest of this at-risk episode; a new episode (after the rates fell back and rose again) needs a new acknowledgement. Test key: answers the health as it is, acknowledges nothing.
         */
        post: operations["acknowledgeHealth"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/automations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List automations
         * @description Each with its counters (runs started, completed, exited; per send step sent, delivered, opened, clicked).
         */
        get: operations["listAutomations"];
        put?: never;
        /**
         * Create an automation
         * @description Validates every step; a problem is a 422 naming its path (steps[2].then[0].templateId). Templates and lists must exist, senders must be on a verified domain.
         */
        post: operations["createAutomation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/automations/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get an automation with its counters
         * @description Counters are kept up to date as runs start and finish and as their messages are delivered, opened and clicked.
         */
        get: operations["getAutomation"];
        put?: never;
        post?: never;
        /**
         * Delete an automation
         * @description Removes the definition with its runs and their history; messages already sent stay.
         */
        delete: operations["deleteAutomation"];
        options?: never;
        head?: never;
        /**
         * Update or pause an automation
         * @description Only the fields given change. Pausing stops new runs; runs already waiting keep waiting and go on when they wake.
         */
        patch: operations["updateAutomation"];
        trace?: never;
    };
    "/api/v1/automations/trigger": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Trigger an event for an address
         * @description Starts a run of every active automation listening for the event whose filter matches and whose reentry rule allows it, and wakes the runs of this address waiting for the event. No match is fine: an empty list. With a test key: the same 202 answer plus `sandbox: true` (the runs it would start, whose ids then exist nowhere) and nothing is started, woken or recorded. Idempotency-Key replays the first answer for 24 h.
         */
        post: operations["triggerAutomations"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/automations/{id}/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List an automation's runs
         * @description Newest first by default; filter by status (active, waiting, completed, exited, failed).
         */
        get: operations["listAutomationRuns"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/automations/{id}/runs/{runId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a run with its history
         * @description Each step the run went through, with its time and outcome (sent with the message id, skipped with the reason, waiting, resumed, timed_out, then/else, updated, exited, failed).
         */
        get: operations["getAutomationRun"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/automations/{id}/runs/{runId}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel a run
         * @description Ends a run in progress: status exited, exitReason "cancelled". A run that already ended is a 409.
         */
        post: operations["cancelAutomationRun"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /**
         * @example {
         *       "type": "/docs/errors#validation_failed",
         *       "title": "Validation failed",
         *       "status": 422,
         *       "detail": "to: must be an email address",
         *       "code": "validation_failed",
         *       "errors": [
         *         {
         *           "field": "to",
         *           "message": "must be an email address"
         *         }
         *       ]
         *     }
         */
        Problem: {
            /** @description URI of the problem type: /docs/errors#<code> */
            type: string;
            title: string;
            status: number;
            detail: string;
            /** @description Stable machine-readable error code */
            code: string;
            instance?: string;
            requestId?: string;
            errors?: {
                field: string;
                message: string;
            }[];
        } & {
            [key: string]: unknown;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    reportComplaint: {
        parameters: {
            query?: never;
            header?: {
                /** @description The FBL key (or use ?key=) */
                "x-fbl-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description The raw ARF message */
        requestBody: {
            content: {
                /**
                 * @example From: <fbl@isp.example>
                 *     To: <fbl@bounces.example.com>
                 *     MIME-Version: 1.0
                 *     Content-Type: multipart/report; report-type=feedback-report; boundary="b"
                 *
                 *     --b
                 *     Content-Type: text/plain
                 *
                 *     An abuse report.
                 *     --b
                 *     Content-Type: message/feedback-report
                 *
                 *     Feedback-Type: abuse
                 *     User-Agent: SomeGenerator/1.0
                 *     Version: 1
                 *     Original-Rcpt-To: <jane@example.net>
                 *
                 *     --b
                 *     Content-Type: text/rfc822-headers
                 *
                 *     From: Acme <news@acme.example>
                 *     To: jane@example.net
                 *     Subject: Hello
                 *     Message-ID: <msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10@acme.example>
                 *
                 *     --b--
                 */
                "message/rfc822": string;
                /**
                 * @example From: <fbl@isp.example>
                 *     To: <fbl@bounces.example.com>
                 *     MIME-Version: 1.0
                 *     Content-Type: multipart/report; report-type=feedback-report; boundary="b"
                 *
                 *     --b
                 *     Content-Type: text/plain
                 *
                 *     An abuse report.
                 *     --b
                 *     Content-Type: message/feedback-report
                 *
                 *     Feedback-Type: abuse
                 *     User-Agent: SomeGenerator/1.0
                 *     Version: 1
                 *     Original-Rcpt-To: <jane@example.net>
                 *
                 *     --b
                 *     Content-Type: text/rfc822-headers
                 *
                 *     From: Acme <news@acme.example>
                 *     To: jane@example.net
                 *     Subject: Hello
                 *     Message-ID: <msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10@acme.example>
                 *
                 *     --b--
                 */
                "message/feedback-report": string;
                /**
                 * @example From: <fbl@isp.example>
                 *     To: <fbl@bounces.example.com>
                 *     MIME-Version: 1.0
                 *     Content-Type: multipart/report; report-type=feedback-report; boundary="b"
                 *
                 *     --b
                 *     Content-Type: text/plain
                 *
                 *     An abuse report.
                 *     --b
                 *     Content-Type: message/feedback-report
                 *
                 *     Feedback-Type: abuse
                 *     User-Agent: SomeGenerator/1.0
                 *     Version: 1
                 *     Original-Rcpt-To: <jane@example.net>
                 *
                 *     --b
                 *     Content-Type: text/rfc822-headers
                 *
                 *     From: Acme <news@acme.example>
                 *     To: jane@example.net
                 *     Subject: Hello
                 *     Message-ID: <msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10@acme.example>
                 *
                 *     --b--
                 */
                "multipart/report": string;
                /**
                 * @example From: <fbl@isp.example>
                 *     To: <fbl@bounces.example.com>
                 *     MIME-Version: 1.0
                 *     Content-Type: multipart/report; report-type=feedback-report; boundary="b"
                 *
                 *     --b
                 *     Content-Type: text/plain
                 *
                 *     An abuse report.
                 *     --b
                 *     Content-Type: message/feedback-report
                 *
                 *     Feedback-Type: abuse
                 *     User-Agent: SomeGenerator/1.0
                 *     Version: 1
                 *     Original-Rcpt-To: <jane@example.net>
                 *
                 *     --b
                 *     Content-Type: text/rfc822-headers
                 *
                 *     From: Acme <news@acme.example>
                 *     To: jane@example.net
                 *     Subject: Hello
                 *     Message-ID: <msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10@acme.example>
                 *
                 *     --b--
                 */
                "text/plain": string;
                /**
                 * @example From: <fbl@isp.example>
                 *     To: <fbl@bounces.example.com>
                 *     MIME-Version: 1.0
                 *     Content-Type: multipart/report; report-type=feedback-report; boundary="b"
                 *
                 *     --b
                 *     Content-Type: text/plain
                 *
                 *     An abuse report.
                 *     --b
                 *     Content-Type: message/feedback-report
                 *
                 *     Feedback-Type: abuse
                 *     User-Agent: SomeGenerator/1.0
                 *     Version: 1
                 *     Original-Rcpt-To: <jane@example.net>
                 *
                 *     --b
                 *     Content-Type: text/rfc822-headers
                 *
                 *     From: Acme <news@acme.example>
                 *     To: jane@example.net
                 *     Subject: Hello
                 *     Message-ID: <msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10@acme.example>
                 *
                 *     --b--
                 */
                "application/octet-stream": string;
            };
        };
        responses: {
            /** @description Report accepted and stored; `matched` says whether it was tied to a message */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Whether the report was tied to one of our messages */
                        matched: boolean;
                        /** @description The message complained about (msg_…), null when unmatched */
                        messageId: string | null;
                        /** @description The complaining address (now suppressed when matched); when unmatched, the reported address, if any */
                        email: string | null;
                    };
                };
            };
            /** @description The body is not an ARF report; it is stored anyway */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong FBL key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over 10 MB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getMe: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "account": {
                     *         "id": "acc_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d",
                     *         "name": "Acme"
                     *       },
                     *       "key": {
                     *         "id": "key_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0e",
                     *         "mode": "live",
                     *         "prefix": "sk_live_Ab3dE9"
                     *       },
                     *       "pools": {
                     *         "transactional": "transactional",
                     *         "broadcast": "acme-dedicated"
                     *       }
                     *     }
                     */
                    "application/json": {
                        account: {
                            id: string;
                            name: string;
                        };
                        /** @description The key used; null when a signed-in dashboard user (session cookie) asks */
                        key: {
                            id: string;
                            mode: "live" | "test";
                            prefix: string;
                        } | null;
                        /** @description Present for a session: the signed-in person */
                        user?: {
                            id: string;
                            email: string;
                        };
                        /** @description The source pools of the delivery policy this account sends through (docs/sending-identity.md): the stream's own pool unless the operator assigned the account another one */
                        pools: {
                            /** @description The pool API and automation mail leaves through */
                            transactional: string;
                            /** @description The pool campaign mail leaves through */
                            broadcast: string;
                        };
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getAccountHealth: {
        parameters: {
            query?: {
                days?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "windowDays": 7,
                     *       "from": "2026-11-17T00:00:00.000Z",
                     *       "to": "2026-11-23T10:00:00.000Z",
                     *       "sent": 1200,
                     *       "delivered": 1150,
                     *       "hardBounces": 12,
                     *       "softBounces": 38,
                     *       "complaints": 0,
                     *       "senderSide": {
                     *         "total": 30,
                     *         "rate": 0.025,
                     *         "byReason": {
                     *           "blocked": 22,
                     *           "auth_failure": 8
                     *         }
                     *       },
                     *       "hardBounceRate": 0.01,
                     *       "complaintRate": 0,
                     *       "status": "warning",
                     *       "issues": [
                     *         {
                     *           "code": "sender_side_bounces",
                     *           "message": "receivers refused our mail (blocked, auth_failure): 2.50 % of sent mail in the last 7 days (warning at 2.0 %)"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        windowDays: number;
                        /** Format: date-time */
                        from: string;
                        /** Format: date-time */
                        to: string;
                        sent: number;
                        delivered: number;
                        /** @description Dead addresses, suppressed */
                        hardBounces: number;
                        /** @description Other final failures, any side */
                        softBounces: number;
                        complaints: number;
                        /** @description Failures on our side (blocked, spam_detected, auth_failure, …): they never suppress a recipient */
                        senderSide: {
                            total: number;
                            rate: number;
                            byReason: {
                                [key: string]: number;
                            };
                        };
                        hardBounceRate: number;
                        complaintRate: number;
                        status: "ok" | "warning" | "critical";
                        issues: {
                            /** @description sender_side_bounces, hard_bounces or complaints */
                            code: string;
                            message: string;
                        }[];
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listSendingSources: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "pools": {
                     *         "transactional": "transactional",
                     *         "broadcast": "broadcast"
                     *       },
                     *       "data": [
                     *         {
                     *           "name": "tx1",
                     *           "address": "203.0.113.10",
                     *           "ehlo": "mta1.example.com",
                     *           "pools": [
                     *             "transactional"
                     *           ],
                     *           "dns": {
                     *             "ok": false,
                     *             "forward": [
                     *               "203.0.113.10"
                     *             ],
                     *             "reverse": [],
                     *             "warning": "source tx1: forward-confirmed reverse DNS fails: 203.0.113.10 has no PTR record (it must name mta1.example.com)",
                     *             "checkedAt": "2026-11-27T02:00:00.000Z"
                     *           },
                     *           "warmup": {
                     *             "start": "2026-11-25",
                     *             "day": 3,
                     *             "cap": 200,
                     *             "sentToday": 165,
                     *             "providers": [
                     *               {
                     *                 "name": "gmail",
                     *                 "sentToday": 120
                     *               },
                     *               {
                     *                 "name": "microsoft",
                     *                 "sentToday": 45
                     *               }
                     *             ]
                     *           }
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        /** @description The pools this account sends through, as on GET /api/v1/me */
                        pools: {
                            transactional: string;
                            broadcast: string;
                        };
                        /** @description The sources of those pools; empty when the deployment sends without sources */
                        data: {
                            name: string;
                            /** @description The IP address mail leaves from */
                            address: string;
                            /** @description The name it greets receivers with */
                            ehlo: string;
                            /** @description Which of this account's pools it belongs to */
                            pools: string[];
                            /** @description null until a start has checked it */
                            dns: {
                                /** @description The EHLO name resolves to the address and the address's PTR record names the EHLO name */
                                ok: boolean;
                                /** @description Addresses the EHLO name resolves to */
                                forward: string[];
                                /** @description Names the PTR records of the address give */
                                reverse: string[];
                                /** @description What to fix in DNS; null when ok */
                                warning: string | null;
                                /** Format: date-time */
                                checkedAt: string;
                            } | null;
                            /** @description Warm-up progress (docs/sending-identity.md#warm-up); null without a plan */
                            warmup: {
                                /** @description The plan's first UTC day */
                                start: string;
                                /** @description Day of the plan today: 1 on the start day, 0 or less before it */
                                day: number;
                                /** @description Most messages per provider today; null after the plan's last day */
                                cap: number | null;
                                /** @description Sent today from this source, all providers together */
                                sentToday: number;
                                /** @description Sent today per provider, busiest first; a provider not yet sent to today is absent (0) */
                                providers: {
                                    /** @description The provider (gmail, microsoft, …) or an MX-rolled-up destination (`mx:<hosts>`) */
                                    name: string;
                                    /** @description Sent today to it: the count `cap` applies to */
                                    sentToday: number;
                                }[];
                            } | null;
                        }[];
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getDeliveryStatus: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "generatedAt": "2026-11-27T04:00:00.000Z",
                     *       "data": [
                     *         {
                     *           "name": "gmail",
                     *           "provider": "gmail",
                     *           "source": "",
                     *           "connections": 3,
                     *           "inFlight": 2,
                     *           "sentLastMinute": 118,
                     *           "limits": {
                     *             "maxConnections": 10,
                     *             "messagesPerMinute": 600,
                     *             "messagesPerConnection": 100
                     *           },
                     *           "suspendedUntil": "2026-11-27T04:05:00.000Z",
                     *           "lastThrottleReply": "421-4.7.28 Our system has detected an unusual rate of unsolicited mail",
                     *           "lastThrottleAt": "2026-11-27T03:59:58.000Z",
                     *           "rateFactor": 0.5
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        generatedAt: string;
                        data: {
                            /** @description The destination: a provider name (gmail, microsoft, …), `relay`, or `mx:<hosts>` — the receiving MX host set, rolled up under provider `default` */
                            name: string;
                            provider: string;
                            /** @description The sending source (IP pool); '' until sources exist */
                            source: string;
                            /** @description Open SMTP connections, summed over the workers */
                            connections: number;
                            /** @description Messages being handed over now */
                            inFlight: number;
                            /** @description Messages sent in the last minute (a few seconds behind) */
                            sentLastMinute: number;
                            limits: {
                                maxConnections: number;
                                /** @description null: no per-minute limit */
                                messagesPerMinute: number | null;
                                messagesPerConnection: number;
                            };
                            /** @description Set while the destination is suspended after a throttle reply */
                            suspendedUntil: string | null;
                            /** @description The receiver's last throttle reply, email addresses masked */
                            lastThrottleReply: string | null;
                            lastThrottleAt: string | null;
                            /** @description The factor the limits are applied at: 1 at full speed, lower after a throttle */
                            rateFactor: number;
                        }[];
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getSession: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "user": {
                     *         "id": "usr_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0f",
                     *         "accountId": "acc_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d",
                     *         "email": "ada@example.com",
                     *         "hasPassword": true,
                     *         "createdAt": "2026-11-20T10:15:30.123Z",
                     *         "passwordSetAt": "2026-11-20T10:15:30.123Z"
                     *       },
                     *       "account": {
                     *         "id": "acc_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d",
                     *         "name": "Acme",
                     *         "monthlyQuota": null
                     *       },
                     *       "csrfToken": "k3Jd9sL2mQ8vR1tX5yZ7aB4cD6eF0gH2",
                     *       "expiresAt": "2026-11-30T10:15:30.123Z",
                     *       "delivery": "mx"
                     *     }
                     */
                    "application/json": {
                        user: {
                            /** @description usr_… identifier */
                            id: string;
                            accountId: string;
                            /** @description Signs in with this address */
                            email: string;
                            /** @description false until a password is set (a user made at first start signs in with a one-time link) */
                            hasPassword: boolean;
                            /** Format: date-time */
                            createdAt: string;
                            passwordSetAt: string | null;
                            /** @description Present (true) when a test key made the request: nothing was stored */
                            sandbox?: boolean;
                        };
                        account: {
                            id: string;
                            name: string;
                            monthlyQuota: number | null;
                        };
                        /** @description Send it back as X-CSRF-Token on every POST, PUT, PATCH and DELETE made with the session cookie */
                        csrfToken: string;
                        /**
                         * Format: date-time
                         * @description When the session ends unless used (7 days idle, 30 days at most)
                         */
                        expiresAt: string;
                        /** @description How this server delivers (POSTLINE_DELIVERY): `capture` is development mode, where the dashboard offers shortcuts such as marking a domain verified */
                        delivery: "mx" | "relay" | "capture";
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The request was made with an API key: only a signed-in person has a session */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    signIn: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    email: string;
                    password: string;
                } | {
                    /** @description A one-time sign-in link token (`sil_…`) */
                    token: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "user": {
                     *         "id": "usr_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0f",
                     *         "accountId": "acc_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d",
                     *         "email": "ada@example.com",
                     *         "hasPassword": true,
                     *         "createdAt": "2026-11-20T10:15:30.123Z",
                     *         "passwordSetAt": "2026-11-20T10:15:30.123Z"
                     *       },
                     *       "account": {
                     *         "id": "acc_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d",
                     *         "name": "Acme",
                     *         "monthlyQuota": null
                     *       },
                     *       "csrfToken": "k3Jd9sL2mQ8vR1tX5yZ7aB4cD6eF0gH2",
                     *       "expiresAt": "2026-11-30T10:15:30.123Z",
                     *       "delivery": "mx"
                     *     }
                     */
                    "application/json": {
                        user: {
                            /** @description usr_… identifier */
                            id: string;
                            accountId: string;
                            /** @description Signs in with this address */
                            email: string;
                            /** @description false until a password is set (a user made at first start signs in with a one-time link) */
                            hasPassword: boolean;
                            /** Format: date-time */
                            createdAt: string;
                            passwordSetAt: string | null;
                            /** @description Present (true) when a test key made the request: nothing was stored */
                            sandbox?: boolean;
                        };
                        account: {
                            id: string;
                            name: string;
                            monthlyQuota: number | null;
                        };
                        /** @description Send it back as X-CSRF-Token on every POST, PUT, PATCH and DELETE made with the session cookie */
                        csrfToken: string;
                        /**
                         * Format: date-time
                         * @description When the session ends unless used (7 days idle, 30 days at most)
                         */
                        expiresAt: string;
                        /** @description How this server delivers (POSTLINE_DELIVERY): `capture` is development mode, where the dashboard offers shortcuts such as marking a domain verified */
                        delivery: "mx" | "relay" | "capture";
                        /** @description true when a test key made the request: it was validated and answered as with a live key, and nothing was changed */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Wrong email or password, or an unknown, expired or used link */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Too many failed sign-ins for this address or IP */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    signOut: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Signed out */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The request was made with an API key: only a signed-in person has a session */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listUsers: {
        parameters: {
            query: {
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "usr_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0f",
                     *           "accountId": "acc_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d",
                     *           "email": "ada@example.com",
                     *           "hasPassword": true,
                     *           "createdAt": "2026-11-20T10:15:30.123Z",
                     *           "passwordSetAt": "2026-11-20T10:15:30.123Z"
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** @description usr_… identifier */
                            id: string;
                            accountId: string;
                            /** @description Signs in with this address */
                            email: string;
                            /** @description false until a password is set (a user made at first start signs in with a one-time link) */
                            hasPassword: boolean;
                            /** Format: date-time */
                            createdAt: string;
                            passwordSetAt: string | null;
                            /** @description Present (true) when a test key made the request: nothing was stored */
                            sandbox?: boolean;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createUser: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "email": "grace@example.com",
                 *       "password": "correct horse battery staple"
                 *     }
                 */
                "application/json": {
                    email: string;
                    /** @description 10 to 256 characters; stored as an argon2id hash */
                    password: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "usr_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0f",
                     *       "accountId": "acc_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d",
                     *       "email": "grace@example.com",
                     *       "hasPassword": true,
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "passwordSetAt": "2026-11-20T10:15:30.123Z"
                     *     }
                     */
                    "application/json": {
                        /** @description usr_… identifier */
                        id: string;
                        accountId: string;
                        /** @description Signs in with this address */
                        email: string;
                        /** @description false until a password is set (a user made at first start signs in with a one-time link) */
                        hasPassword: boolean;
                        /** Format: date-time */
                        createdAt: string;
                        passwordSetAt: string | null;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The email is taken, or you tried to delete yourself */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description User id (usr_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "usr_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0f",
                     *       "accountId": "acc_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d",
                     *       "email": "ada@example.com",
                     *       "hasPassword": true,
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "passwordSetAt": "2026-11-20T10:15:30.123Z"
                     *     }
                     */
                    "application/json": {
                        /** @description usr_… identifier */
                        id: string;
                        accountId: string;
                        /** @description Signs in with this address */
                        email: string;
                        /** @description false until a password is set (a user made at first start signs in with a one-time link) */
                        hasPassword: boolean;
                        /** Format: date-time */
                        createdAt: string;
                        passwordSetAt: string | null;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No user with this id in this account */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description User id (usr_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No user with this id in this account */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description The email is taken, or you tried to delete yourself */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    updateUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description User id (usr_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    email?: string;
                    /** @description 10 to 256 characters; stored as an argon2id hash */
                    password?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "usr_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0f",
                     *       "accountId": "acc_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d",
                     *       "email": "ada@example.com",
                     *       "hasPassword": true,
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "passwordSetAt": "2026-11-20T10:15:30.123Z"
                     *     }
                     */
                    "application/json": {
                        /** @description usr_… identifier */
                        id: string;
                        accountId: string;
                        /** @description Signs in with this address */
                        email: string;
                        /** @description false until a password is set (a user made at first start signs in with a one-time link) */
                        hasPassword: boolean;
                        /** Format: date-time */
                        createdAt: string;
                        passwordSetAt: string | null;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No user with this id in this account */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description The email is taken, or you tried to delete yourself */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listApiKeys: {
        parameters: {
            query: {
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "key_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0e",
                     *           "mode": "live",
                     *           "name": "production server",
                     *           "prefix": "sk_live_Ab3dE9",
                     *           "createdAt": "2026-11-20T10:15:30.123Z",
                     *           "lastUsedAt": "2026-11-22T08:01:02.000Z",
                     *           "revokedAt": null
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** @description key_… identifier */
                            id: string;
                            /** @description `live` (sk_live_…) acts for real; `test` (sk_test_…) validates and answers `sandbox: true`, changing nothing */
                            mode: "live" | "test";
                            /** @description A label */
                            name: string | null;
                            /** @description The first characters of the key, to recognise it in lists */
                            prefix: string;
                            /** Format: date-time */
                            createdAt: string;
                            lastUsedAt: string | null;
                            revokedAt: string | null;
                            /** @description Present (true) when a test key made the request: nothing was stored */
                            sandbox?: boolean;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description A label, e.g. where the key is used; no control characters */
                    name?: string;
                    /**
                     * @description `test` makes a test key (sk_test_…)
                     * @default live
                     */
                    mode: "live" | "test";
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "key_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0e",
                     *       "mode": "live",
                     *       "name": "production server",
                     *       "prefix": "sk_live_Ab3dE9",
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "lastUsedAt": null,
                     *       "revokedAt": null,
                     *       "key": "sk_live_Ab3dE9Zm9yIGV4YW1wbGUgb25seTogbm90IGEgcmVhbCBrZXk"
                     *     }
                     */
                    "application/json": {
                        /** @description key_… identifier */
                        id: string;
                        /** @description `live` (sk_live_…) acts for real; `test` (sk_test_…) validates and answers `sandbox: true`, changing nothing */
                        mode: "live" | "test";
                        /** @description A label */
                        name: string | null;
                        /** @description The first characters of the key, to recognise it in lists */
                        prefix: string;
                        /** Format: date-time */
                        createdAt: string;
                        lastUsedAt: string | null;
                        revokedAt: string | null;
                        /** @description The full key: shown only in this response, never again (only its hash is kept) */
                        key: string;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Key id (key_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "key_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0e",
                     *       "mode": "live",
                     *       "name": "production server",
                     *       "prefix": "sk_live_Ab3dE9",
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "lastUsedAt": "2026-11-22T08:01:02.000Z",
                     *       "revokedAt": null
                     *     }
                     */
                    "application/json": {
                        /** @description key_… identifier */
                        id: string;
                        /** @description `live` (sk_live_…) acts for real; `test` (sk_test_…) validates and answers `sandbox: true`, changing nothing */
                        mode: "live" | "test";
                        /** @description A label */
                        name: string | null;
                        /** @description The first characters of the key, to recognise it in lists */
                        prefix: string;
                        /** Format: date-time */
                        createdAt: string;
                        lastUsedAt: string | null;
                        revokedAt: string | null;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key with this id in this account */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    revokeApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Key id (key_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "key_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0e",
                     *       "mode": "live",
                     *       "name": "production server",
                     *       "prefix": "sk_live_Ab3dE9",
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "lastUsedAt": "2026-11-22T08:01:02.000Z",
                     *       "revokedAt": "2026-11-23T09:00:00.000Z"
                     *     }
                     */
                    "application/json": {
                        /** @description key_… identifier */
                        id: string;
                        /** @description `live` (sk_live_…) acts for real; `test` (sk_test_…) validates and answers `sandbox: true`, changing nothing */
                        mode: "live" | "test";
                        /** @description A label */
                        name: string | null;
                        /** @description The first characters of the key, to recognise it in lists */
                        prefix: string;
                        /** Format: date-time */
                        createdAt: string;
                        lastUsedAt: string | null;
                        revokedAt: string | null;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key with this id in this account */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listDomains: {
        parameters: {
            query: {
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "dom_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *           "name": "example.com",
                     *           "status": "verified",
                     *           "records": [
                     *             {
                     *               "type": "TXT",
                     *               "name": "plr-3f9c1a0b._domainkey.example.com",
                     *               "value": "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAnSpMOU12Vq0LGQkIxE9cjspjqdtYyUSd72Q9ggQX1rWIpbc4m9vOLaAUJE7bBQ33oyuB2PafjWbmDwldKCeApf5jnqsbABVj/PyFUsove+9prV3BIDsga+YoxMYAlQOgexxQ1y8SbcYyehQAvmpgogKrCFDNR3Tbn1tqzJQHz4V2L35EkC5jbGU3QrlotjQUfacLnkwFKfaX1mDQ2S6A9KuhDqaZufdyPX9s1S7TzB5EbWsJMbMozdh7oaVqGQU+SNeENBUnydUILTctFZd35qkMEzoJc2VTb7DRYzOUXx22Zvs9+Du+oxkvmOBeuO/vUFb38O+M+R6VqGdBJyb/mQIDAQAB",
                     *               "purpose": "dkim",
                     *               "required": true,
                     *               "status": "verified",
                     *               "checkedAt": "2026-11-20T10:20:02.456Z",
                     *               "detail": null
                     *             },
                     *             {
                     *               "type": "TXT",
                     *               "name": "ple-3f9c1a0b._domainkey.example.com",
                     *               "value": "v=DKIM1; k=ed25519; p=CvfgJNPi8JEvTMImaNybWRlVlmKoZTSE6pyM3xRfdYE=",
                     *               "purpose": "dkim_ed25519",
                     *               "required": false,
                     *               "status": "verified",
                     *               "checkedAt": "2026-11-20T10:20:02.456Z",
                     *               "detail": null
                     *             },
                     *             {
                     *               "type": "MX",
                     *               "name": "bounces.example.com",
                     *               "value": "mail.postline.example.net",
                     *               "priority": 10,
                     *               "purpose": "return_path",
                     *               "required": false,
                     *               "status": "verified",
                     *               "checkedAt": "2026-11-20T10:20:02.456Z",
                     *               "detail": null
                     *             },
                     *             {
                     *               "type": "TXT",
                     *               "name": "bounces.example.com",
                     *               "value": "v=spf1 a:mail.postline.example.net ~all",
                     *               "purpose": "spf",
                     *               "required": false,
                     *               "status": "verified",
                     *               "checkedAt": "2026-11-20T10:20:02.456Z",
                     *               "detail": null
                     *             },
                     *             {
                     *               "type": "TXT",
                     *               "name": "_dmarc.example.com",
                     *               "value": "v=DMARC1; p=none;",
                     *               "purpose": "dmarc",
                     *               "required": false,
                     *               "status": "verified",
                     *               "checkedAt": "2026-11-20T10:20:02.456Z",
                     *               "detail": "v=DMARC1; p=none;"
                     *             },
                     *             {
                     *               "type": "CNAME",
                     *               "name": "track.example.com",
                     *               "value": "mail.postline.example.net",
                     *               "purpose": "tracking",
                     *               "required": false,
                     *               "status": "missing",
                     *               "checkedAt": "2026-11-20T10:20:02.456Z",
                     *               "detail": "no CNAME record at this name"
                     *             }
                     *           ],
                     *           "tracking": {
                     *             "host": "track.example.com",
                     *             "target": "mail.postline.example.net",
                     *             "status": "failed",
                     *             "checkedAt": "2026-11-20T10:20:02.456Z"
                     *           },
                     *           "createdAt": "2026-11-20T10:15:30.123Z",
                     *           "verifiedAt": "2026-11-20T10:20:02.456Z",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z"
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** @description dom_… identifier */
                            id: string;
                            /** @description Lower-case ASCII (punycode for IDNs) */
                            name: string;
                            /** @description verified once the RSA DKIM record matched; stays verified if a later check fails */
                            status: "pending" | "verified";
                            records: {
                                /** @description DNS record type */
                                type: "TXT" | "MX" | "CNAME";
                                /** @description Fully qualified name to publish the record at */
                                name: string;
                                /** @description Record value (TXT content, MX exchange or CNAME target) */
                                value: string;
                                /** @description MX preference (MX records only) */
                                priority?: number;
                                /** @description dkim: RSA-2048 key, decides verification; dkim_ed25519: second signature (RFC 8463); return_path: MX of the bounce domain; spf: on the bounce domain (SPF checks MAIL FROM); dmarc: suggestion, any DMARC record counts; tracking: optional white-label CNAME */
                                purpose: "dkim" | "dkim_ed25519" | "return_path" | "spf" | "dmarc" | "tracking";
                                /** @description Whether the domain needs this record to become verified (only the RSA DKIM record) */
                                required: boolean;
                                /** @description Result of the last check; pending = never checked */
                                status: "pending" | "verified" | "missing" | "mismatch" | "temp_error";
                                checkedAt: string | null;
                                detail: string | null;
                            }[];
                            tracking: {
                                /** @description track.<domain> */
                                host: string;
                                /** @description What track.<domain> must be a CNAME to (POSTLINE_TRACKING_HOST) */
                                target: string;
                                /** @description verified: new messages use http://track.<domain>/ for links and the pixel */
                                status: "pending" | "verified" | "failed";
                                checkedAt: string | null;
                            };
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            createdAt: string;
                            verifiedAt: string | null;
                            checkedAt: string | null;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createDomain: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "example.com"
                 *     }
                 */
                "application/json": {
                    /** @description Domain name, e.g. example.com or an IDN (stored in punycode); no trailing dot */
                    name: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "dom_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *       "name": "example.com",
                     *       "status": "pending",
                     *       "records": [
                     *         {
                     *           "type": "TXT",
                     *           "name": "plr-3f9c1a0b._domainkey.example.com",
                     *           "value": "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAnSpMOU12Vq0LGQkIxE9cjspjqdtYyUSd72Q9ggQX1rWIpbc4m9vOLaAUJE7bBQ33oyuB2PafjWbmDwldKCeApf5jnqsbABVj/PyFUsove+9prV3BIDsga+YoxMYAlQOgexxQ1y8SbcYyehQAvmpgogKrCFDNR3Tbn1tqzJQHz4V2L35EkC5jbGU3QrlotjQUfacLnkwFKfaX1mDQ2S6A9KuhDqaZufdyPX9s1S7TzB5EbWsJMbMozdh7oaVqGQU+SNeENBUnydUILTctFZd35qkMEzoJc2VTb7DRYzOUXx22Zvs9+Du+oxkvmOBeuO/vUFb38O+M+R6VqGdBJyb/mQIDAQAB",
                     *           "purpose": "dkim",
                     *           "required": true,
                     *           "status": "pending",
                     *           "checkedAt": null,
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "TXT",
                     *           "name": "ple-3f9c1a0b._domainkey.example.com",
                     *           "value": "v=DKIM1; k=ed25519; p=CvfgJNPi8JEvTMImaNybWRlVlmKoZTSE6pyM3xRfdYE=",
                     *           "purpose": "dkim_ed25519",
                     *           "required": false,
                     *           "status": "pending",
                     *           "checkedAt": null,
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "MX",
                     *           "name": "bounces.example.com",
                     *           "value": "mail.postline.example.net",
                     *           "priority": 10,
                     *           "purpose": "return_path",
                     *           "required": false,
                     *           "status": "pending",
                     *           "checkedAt": null,
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "TXT",
                     *           "name": "bounces.example.com",
                     *           "value": "v=spf1 a:mail.postline.example.net ~all",
                     *           "purpose": "spf",
                     *           "required": false,
                     *           "status": "pending",
                     *           "checkedAt": null,
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "TXT",
                     *           "name": "_dmarc.example.com",
                     *           "value": "v=DMARC1; p=none;",
                     *           "purpose": "dmarc",
                     *           "required": false,
                     *           "status": "pending",
                     *           "checkedAt": null,
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "CNAME",
                     *           "name": "track.example.com",
                     *           "value": "mail.postline.example.net",
                     *           "purpose": "tracking",
                     *           "required": false,
                     *           "status": "pending",
                     *           "checkedAt": null,
                     *           "detail": null
                     *         }
                     *       ],
                     *       "tracking": {
                     *         "host": "track.example.com",
                     *         "target": "mail.postline.example.net",
                     *         "status": "pending",
                     *         "checkedAt": null
                     *       },
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "verifiedAt": null,
                     *       "checkedAt": null
                     *     }
                     */
                    "application/json": {
                        /** @description dom_… identifier */
                        id: string;
                        /** @description Lower-case ASCII (punycode for IDNs) */
                        name: string;
                        /** @description verified once the RSA DKIM record matched; stays verified if a later check fails */
                        status: "pending" | "verified";
                        records: {
                            /** @description DNS record type */
                            type: "TXT" | "MX" | "CNAME";
                            /** @description Fully qualified name to publish the record at */
                            name: string;
                            /** @description Record value (TXT content, MX exchange or CNAME target) */
                            value: string;
                            /** @description MX preference (MX records only) */
                            priority?: number;
                            /** @description dkim: RSA-2048 key, decides verification; dkim_ed25519: second signature (RFC 8463); return_path: MX of the bounce domain; spf: on the bounce domain (SPF checks MAIL FROM); dmarc: suggestion, any DMARC record counts; tracking: optional white-label CNAME */
                            purpose: "dkim" | "dkim_ed25519" | "return_path" | "spf" | "dmarc" | "tracking";
                            /** @description Whether the domain needs this record to become verified (only the RSA DKIM record) */
                            required: boolean;
                            /** @description Result of the last check; pending = never checked */
                            status: "pending" | "verified" | "missing" | "mismatch" | "temp_error";
                            checkedAt: string | null;
                            detail: string | null;
                        }[];
                        tracking: {
                            /** @description track.<domain> */
                            host: string;
                            /** @description What track.<domain> must be a CNAME to (POSTLINE_TRACKING_HOST) */
                            target: string;
                            /** @description verified: new messages use http://track.<domain>/ for links and the pixel */
                            status: "pending" | "verified" | "failed";
                            checkedAt: string | null;
                        };
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        verifiedAt: string | null;
                        checkedAt: string | null;
                        /** @description true when a test key made the request: it was validated and answered as with a live key, and nothing was changed */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The account already has this domain */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed: not a usable domain name */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getDomain: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Domain id (dom_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "dom_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *       "name": "example.com",
                     *       "status": "verified",
                     *       "records": [
                     *         {
                     *           "type": "TXT",
                     *           "name": "plr-3f9c1a0b._domainkey.example.com",
                     *           "value": "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAnSpMOU12Vq0LGQkIxE9cjspjqdtYyUSd72Q9ggQX1rWIpbc4m9vOLaAUJE7bBQ33oyuB2PafjWbmDwldKCeApf5jnqsbABVj/PyFUsove+9prV3BIDsga+YoxMYAlQOgexxQ1y8SbcYyehQAvmpgogKrCFDNR3Tbn1tqzJQHz4V2L35EkC5jbGU3QrlotjQUfacLnkwFKfaX1mDQ2S6A9KuhDqaZufdyPX9s1S7TzB5EbWsJMbMozdh7oaVqGQU+SNeENBUnydUILTctFZd35qkMEzoJc2VTb7DRYzOUXx22Zvs9+Du+oxkvmOBeuO/vUFb38O+M+R6VqGdBJyb/mQIDAQAB",
                     *           "purpose": "dkim",
                     *           "required": true,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "TXT",
                     *           "name": "ple-3f9c1a0b._domainkey.example.com",
                     *           "value": "v=DKIM1; k=ed25519; p=CvfgJNPi8JEvTMImaNybWRlVlmKoZTSE6pyM3xRfdYE=",
                     *           "purpose": "dkim_ed25519",
                     *           "required": false,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "MX",
                     *           "name": "bounces.example.com",
                     *           "value": "mail.postline.example.net",
                     *           "priority": 10,
                     *           "purpose": "return_path",
                     *           "required": false,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "TXT",
                     *           "name": "bounces.example.com",
                     *           "value": "v=spf1 a:mail.postline.example.net ~all",
                     *           "purpose": "spf",
                     *           "required": false,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "TXT",
                     *           "name": "_dmarc.example.com",
                     *           "value": "v=DMARC1; p=none;",
                     *           "purpose": "dmarc",
                     *           "required": false,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": "v=DMARC1; p=none;"
                     *         },
                     *         {
                     *           "type": "CNAME",
                     *           "name": "track.example.com",
                     *           "value": "mail.postline.example.net",
                     *           "purpose": "tracking",
                     *           "required": false,
                     *           "status": "missing",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": "no CNAME record at this name"
                     *         }
                     *       ],
                     *       "tracking": {
                     *         "host": "track.example.com",
                     *         "target": "mail.postline.example.net",
                     *         "status": "failed",
                     *         "checkedAt": "2026-11-20T10:20:02.456Z"
                     *       },
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "verifiedAt": "2026-11-20T10:20:02.456Z",
                     *       "checkedAt": "2026-11-20T10:20:02.456Z"
                     *     }
                     */
                    "application/json": {
                        /** @description dom_… identifier */
                        id: string;
                        /** @description Lower-case ASCII (punycode for IDNs) */
                        name: string;
                        /** @description verified once the RSA DKIM record matched; stays verified if a later check fails */
                        status: "pending" | "verified";
                        records: {
                            /** @description DNS record type */
                            type: "TXT" | "MX" | "CNAME";
                            /** @description Fully qualified name to publish the record at */
                            name: string;
                            /** @description Record value (TXT content, MX exchange or CNAME target) */
                            value: string;
                            /** @description MX preference (MX records only) */
                            priority?: number;
                            /** @description dkim: RSA-2048 key, decides verification; dkim_ed25519: second signature (RFC 8463); return_path: MX of the bounce domain; spf: on the bounce domain (SPF checks MAIL FROM); dmarc: suggestion, any DMARC record counts; tracking: optional white-label CNAME */
                            purpose: "dkim" | "dkim_ed25519" | "return_path" | "spf" | "dmarc" | "tracking";
                            /** @description Whether the domain needs this record to become verified (only the RSA DKIM record) */
                            required: boolean;
                            /** @description Result of the last check; pending = never checked */
                            status: "pending" | "verified" | "missing" | "mismatch" | "temp_error";
                            checkedAt: string | null;
                            detail: string | null;
                        }[];
                        tracking: {
                            /** @description track.<domain> */
                            host: string;
                            /** @description What track.<domain> must be a CNAME to (POSTLINE_TRACKING_HOST) */
                            target: string;
                            /** @description verified: new messages use http://track.<domain>/ for links and the pixel */
                            status: "pending" | "verified" | "failed";
                            checkedAt: string | null;
                        };
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        verifiedAt: string | null;
                        checkedAt: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No domain with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteDomain: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Domain id (dom_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No domain with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    verifyDomain: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Domain id (dom_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "dom_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *       "name": "example.com",
                     *       "status": "verified",
                     *       "records": [
                     *         {
                     *           "type": "TXT",
                     *           "name": "plr-3f9c1a0b._domainkey.example.com",
                     *           "value": "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAnSpMOU12Vq0LGQkIxE9cjspjqdtYyUSd72Q9ggQX1rWIpbc4m9vOLaAUJE7bBQ33oyuB2PafjWbmDwldKCeApf5jnqsbABVj/PyFUsove+9prV3BIDsga+YoxMYAlQOgexxQ1y8SbcYyehQAvmpgogKrCFDNR3Tbn1tqzJQHz4V2L35EkC5jbGU3QrlotjQUfacLnkwFKfaX1mDQ2S6A9KuhDqaZufdyPX9s1S7TzB5EbWsJMbMozdh7oaVqGQU+SNeENBUnydUILTctFZd35qkMEzoJc2VTb7DRYzOUXx22Zvs9+Du+oxkvmOBeuO/vUFb38O+M+R6VqGdBJyb/mQIDAQAB",
                     *           "purpose": "dkim",
                     *           "required": true,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "TXT",
                     *           "name": "ple-3f9c1a0b._domainkey.example.com",
                     *           "value": "v=DKIM1; k=ed25519; p=CvfgJNPi8JEvTMImaNybWRlVlmKoZTSE6pyM3xRfdYE=",
                     *           "purpose": "dkim_ed25519",
                     *           "required": false,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "MX",
                     *           "name": "bounces.example.com",
                     *           "value": "mail.postline.example.net",
                     *           "priority": 10,
                     *           "purpose": "return_path",
                     *           "required": false,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "TXT",
                     *           "name": "bounces.example.com",
                     *           "value": "v=spf1 a:mail.postline.example.net ~all",
                     *           "purpose": "spf",
                     *           "required": false,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "TXT",
                     *           "name": "_dmarc.example.com",
                     *           "value": "v=DMARC1; p=none;",
                     *           "purpose": "dmarc",
                     *           "required": false,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": "v=DMARC1; p=none;"
                     *         },
                     *         {
                     *           "type": "CNAME",
                     *           "name": "track.example.com",
                     *           "value": "mail.postline.example.net",
                     *           "purpose": "tracking",
                     *           "required": false,
                     *           "status": "missing",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": "no CNAME record at this name"
                     *         }
                     *       ],
                     *       "tracking": {
                     *         "host": "track.example.com",
                     *         "target": "mail.postline.example.net",
                     *         "status": "failed",
                     *         "checkedAt": "2026-11-20T10:20:02.456Z"
                     *       },
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "verifiedAt": "2026-11-20T10:20:02.456Z",
                     *       "checkedAt": "2026-11-20T10:20:02.456Z"
                     *     }
                     */
                    "application/json": {
                        /** @description dom_… identifier */
                        id: string;
                        /** @description Lower-case ASCII (punycode for IDNs) */
                        name: string;
                        /** @description verified once the RSA DKIM record matched; stays verified if a later check fails */
                        status: "pending" | "verified";
                        records: {
                            /** @description DNS record type */
                            type: "TXT" | "MX" | "CNAME";
                            /** @description Fully qualified name to publish the record at */
                            name: string;
                            /** @description Record value (TXT content, MX exchange or CNAME target) */
                            value: string;
                            /** @description MX preference (MX records only) */
                            priority?: number;
                            /** @description dkim: RSA-2048 key, decides verification; dkim_ed25519: second signature (RFC 8463); return_path: MX of the bounce domain; spf: on the bounce domain (SPF checks MAIL FROM); dmarc: suggestion, any DMARC record counts; tracking: optional white-label CNAME */
                            purpose: "dkim" | "dkim_ed25519" | "return_path" | "spf" | "dmarc" | "tracking";
                            /** @description Whether the domain needs this record to become verified (only the RSA DKIM record) */
                            required: boolean;
                            /** @description Result of the last check; pending = never checked */
                            status: "pending" | "verified" | "missing" | "mismatch" | "temp_error";
                            checkedAt: string | null;
                            detail: string | null;
                        }[];
                        tracking: {
                            /** @description track.<domain> */
                            host: string;
                            /** @description What track.<domain> must be a CNAME to (POSTLINE_TRACKING_HOST) */
                            target: string;
                            /** @description verified: new messages use http://track.<domain>/ for links and the pixel */
                            status: "pending" | "verified" | "failed";
                            checkedAt: string | null;
                        };
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        verifiedAt: string | null;
                        checkedAt: string | null;
                        /** @description true when a test key made the request: it was validated and answered as with a live key, and nothing was changed */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No domain with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    verifyDomainTracking: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Domain id (dom_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "dom_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *       "name": "example.com",
                     *       "status": "verified",
                     *       "records": [
                     *         {
                     *           "type": "TXT",
                     *           "name": "plr-3f9c1a0b._domainkey.example.com",
                     *           "value": "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAnSpMOU12Vq0LGQkIxE9cjspjqdtYyUSd72Q9ggQX1rWIpbc4m9vOLaAUJE7bBQ33oyuB2PafjWbmDwldKCeApf5jnqsbABVj/PyFUsove+9prV3BIDsga+YoxMYAlQOgexxQ1y8SbcYyehQAvmpgogKrCFDNR3Tbn1tqzJQHz4V2L35EkC5jbGU3QrlotjQUfacLnkwFKfaX1mDQ2S6A9KuhDqaZufdyPX9s1S7TzB5EbWsJMbMozdh7oaVqGQU+SNeENBUnydUILTctFZd35qkMEzoJc2VTb7DRYzOUXx22Zvs9+Du+oxkvmOBeuO/vUFb38O+M+R6VqGdBJyb/mQIDAQAB",
                     *           "purpose": "dkim",
                     *           "required": true,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "TXT",
                     *           "name": "ple-3f9c1a0b._domainkey.example.com",
                     *           "value": "v=DKIM1; k=ed25519; p=CvfgJNPi8JEvTMImaNybWRlVlmKoZTSE6pyM3xRfdYE=",
                     *           "purpose": "dkim_ed25519",
                     *           "required": false,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "MX",
                     *           "name": "bounces.example.com",
                     *           "value": "mail.postline.example.net",
                     *           "priority": 10,
                     *           "purpose": "return_path",
                     *           "required": false,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "TXT",
                     *           "name": "bounces.example.com",
                     *           "value": "v=spf1 a:mail.postline.example.net ~all",
                     *           "purpose": "spf",
                     *           "required": false,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "TXT",
                     *           "name": "_dmarc.example.com",
                     *           "value": "v=DMARC1; p=none;",
                     *           "purpose": "dmarc",
                     *           "required": false,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": "v=DMARC1; p=none;"
                     *         },
                     *         {
                     *           "type": "CNAME",
                     *           "name": "track.example.com",
                     *           "value": "mail.postline.example.net",
                     *           "purpose": "tracking",
                     *           "required": false,
                     *           "status": "missing",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": "no CNAME record at this name"
                     *         }
                     *       ],
                     *       "tracking": {
                     *         "host": "track.example.com",
                     *         "target": "mail.postline.example.net",
                     *         "status": "verified",
                     *         "checkedAt": "2026-11-20T10:20:02.456Z"
                     *       },
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "verifiedAt": "2026-11-20T10:20:02.456Z",
                     *       "checkedAt": "2026-11-20T10:20:02.456Z"
                     *     }
                     */
                    "application/json": {
                        /** @description dom_… identifier */
                        id: string;
                        /** @description Lower-case ASCII (punycode for IDNs) */
                        name: string;
                        /** @description verified once the RSA DKIM record matched; stays verified if a later check fails */
                        status: "pending" | "verified";
                        records: {
                            /** @description DNS record type */
                            type: "TXT" | "MX" | "CNAME";
                            /** @description Fully qualified name to publish the record at */
                            name: string;
                            /** @description Record value (TXT content, MX exchange or CNAME target) */
                            value: string;
                            /** @description MX preference (MX records only) */
                            priority?: number;
                            /** @description dkim: RSA-2048 key, decides verification; dkim_ed25519: second signature (RFC 8463); return_path: MX of the bounce domain; spf: on the bounce domain (SPF checks MAIL FROM); dmarc: suggestion, any DMARC record counts; tracking: optional white-label CNAME */
                            purpose: "dkim" | "dkim_ed25519" | "return_path" | "spf" | "dmarc" | "tracking";
                            /** @description Whether the domain needs this record to become verified (only the RSA DKIM record) */
                            required: boolean;
                            /** @description Result of the last check; pending = never checked */
                            status: "pending" | "verified" | "missing" | "mismatch" | "temp_error";
                            checkedAt: string | null;
                            detail: string | null;
                        }[];
                        tracking: {
                            /** @description track.<domain> */
                            host: string;
                            /** @description What track.<domain> must be a CNAME to (POSTLINE_TRACKING_HOST) */
                            target: string;
                            /** @description verified: new messages use http://track.<domain>/ for links and the pixel */
                            status: "pending" | "verified" | "failed";
                            checkedAt: string | null;
                        };
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        verifiedAt: string | null;
                        checkedAt: string | null;
                        /** @description true when a test key made the request: it was validated and answered as with a live key, and nothing was changed */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No domain with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    markDomainVerified: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Domain id (dom_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "dom_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *       "name": "example.com",
                     *       "status": "verified",
                     *       "records": [
                     *         {
                     *           "type": "TXT",
                     *           "name": "plr-3f9c1a0b._domainkey.example.com",
                     *           "value": "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAnSpMOU12Vq0LGQkIxE9cjspjqdtYyUSd72Q9ggQX1rWIpbc4m9vOLaAUJE7bBQ33oyuB2PafjWbmDwldKCeApf5jnqsbABVj/PyFUsove+9prV3BIDsga+YoxMYAlQOgexxQ1y8SbcYyehQAvmpgogKrCFDNR3Tbn1tqzJQHz4V2L35EkC5jbGU3QrlotjQUfacLnkwFKfaX1mDQ2S6A9KuhDqaZufdyPX9s1S7TzB5EbWsJMbMozdh7oaVqGQU+SNeENBUnydUILTctFZd35qkMEzoJc2VTb7DRYzOUXx22Zvs9+Du+oxkvmOBeuO/vUFb38O+M+R6VqGdBJyb/mQIDAQAB",
                     *           "purpose": "dkim",
                     *           "required": true,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "TXT",
                     *           "name": "ple-3f9c1a0b._domainkey.example.com",
                     *           "value": "v=DKIM1; k=ed25519; p=CvfgJNPi8JEvTMImaNybWRlVlmKoZTSE6pyM3xRfdYE=",
                     *           "purpose": "dkim_ed25519",
                     *           "required": false,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "MX",
                     *           "name": "bounces.example.com",
                     *           "value": "mail.postline.example.net",
                     *           "priority": 10,
                     *           "purpose": "return_path",
                     *           "required": false,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "TXT",
                     *           "name": "bounces.example.com",
                     *           "value": "v=spf1 a:mail.postline.example.net ~all",
                     *           "purpose": "spf",
                     *           "required": false,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": null
                     *         },
                     *         {
                     *           "type": "TXT",
                     *           "name": "_dmarc.example.com",
                     *           "value": "v=DMARC1; p=none;",
                     *           "purpose": "dmarc",
                     *           "required": false,
                     *           "status": "verified",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": "v=DMARC1; p=none;"
                     *         },
                     *         {
                     *           "type": "CNAME",
                     *           "name": "track.example.com",
                     *           "value": "mail.postline.example.net",
                     *           "purpose": "tracking",
                     *           "required": false,
                     *           "status": "missing",
                     *           "checkedAt": "2026-11-20T10:20:02.456Z",
                     *           "detail": "no CNAME record at this name"
                     *         }
                     *       ],
                     *       "tracking": {
                     *         "host": "track.example.com",
                     *         "target": "mail.postline.example.net",
                     *         "status": "failed",
                     *         "checkedAt": "2026-11-20T10:20:02.456Z"
                     *       },
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "verifiedAt": "2026-11-20T10:20:02.456Z",
                     *       "checkedAt": "2026-11-20T10:20:02.456Z"
                     *     }
                     */
                    "application/json": {
                        /** @description dom_… identifier */
                        id: string;
                        /** @description Lower-case ASCII (punycode for IDNs) */
                        name: string;
                        /** @description verified once the RSA DKIM record matched; stays verified if a later check fails */
                        status: "pending" | "verified";
                        records: {
                            /** @description DNS record type */
                            type: "TXT" | "MX" | "CNAME";
                            /** @description Fully qualified name to publish the record at */
                            name: string;
                            /** @description Record value (TXT content, MX exchange or CNAME target) */
                            value: string;
                            /** @description MX preference (MX records only) */
                            priority?: number;
                            /** @description dkim: RSA-2048 key, decides verification; dkim_ed25519: second signature (RFC 8463); return_path: MX of the bounce domain; spf: on the bounce domain (SPF checks MAIL FROM); dmarc: suggestion, any DMARC record counts; tracking: optional white-label CNAME */
                            purpose: "dkim" | "dkim_ed25519" | "return_path" | "spf" | "dmarc" | "tracking";
                            /** @description Whether the domain needs this record to become verified (only the RSA DKIM record) */
                            required: boolean;
                            /** @description Result of the last check; pending = never checked */
                            status: "pending" | "verified" | "missing" | "mismatch" | "temp_error";
                            checkedAt: string | null;
                            detail: string | null;
                        }[];
                        tracking: {
                            /** @description track.<domain> */
                            host: string;
                            /** @description What track.<domain> must be a CNAME to (POSTLINE_TRACKING_HOST) */
                            target: string;
                            /** @description verified: new messages use http://track.<domain>/ for links and the pixel */
                            status: "pending" | "verified" | "failed";
                            checkedAt: string | null;
                        };
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        verifiedAt: string | null;
                        checkedAt: string | null;
                        /** @description true when a test key made the request: it was validated and answered as with a live key, and nothing was changed */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a development server (POSTLINE_DELIVERY is not capture) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description No domain with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listEmails: {
        parameters: {
            query: {
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
                status?: "queued" | "scheduled" | "sending" | "delivered" | "deferred" | "bounced" | "failed" | "suppressed" | "held";
                to?: string;
                tag?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            /** @description queued, scheduled, sending, delivered, deferred, bounced, failed or held (a message of a paused campaign) */
                            status: string;
                            from: {
                                email: string;
                                name: string | null;
                            };
                            to: string;
                            cc: string[];
                            subject: string;
                            tags: string[];
                            templateId: string | null;
                            attempts: number;
                            lastResponse: string | null;
                            lastMx: string | null;
                            nextAttemptAt: string | null;
                            scheduledAt: string | null;
                            deliveredAt: string | null;
                            createdAt: string;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    sendEmail: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "to": "ada@example.com",
                 *       "from": {
                 *         "email": "hello@acme.com",
                 *         "name": "Acme"
                 *       },
                 *       "subject": "Welcome, {{ first_name | there }}!",
                 *       "html": "<p>Hi {{ first_name | there }}</p>",
                 *       "variables": {
                 *         "first_name": "Ada"
                 *       }
                 *     }
                 */
                "application/json": {
                    /** @description A bare address: name@example.com */
                    to: string;
                    from: {
                        /** @description A bare address: name@example.com */
                        email: string;
                        name?: string;
                    };
                    /** @description May contain {{variables}}; at most 998 bytes once rendered */
                    subject?: string;
                    /** @description HTML body; at most 2 MB */
                    html?: string;
                    /** @description Plain-text body; generated from html when absent */
                    text?: string;
                    /** @description A template of this account; supplies subject/html/text the request leaves out */
                    templateId?: string;
                    /** @description Values for {{merge_fields}} and [for] loops */
                    variables?: {
                        [key: string]: unknown;
                    };
                    cc?: string[];
                    bcc?: string[];
                    /** @description A bare address: name@example.com */
                    replyTo?: string;
                    headers?: {
                        [key: string]: string;
                    };
                    tags?: string[];
                    attachments?: {
                        filename: string;
                        /** @description base64 */
                        content: string;
                        contentType?: string;
                    }[];
                    /**
                     * Format: date-time
                     * @description Deliver at this time (up to 30 days ahead)
                     */
                    scheduledAt?: string;
                    /** @description Open and click tracking of this message, each on unless false; the unsubscribe footer is always added */
                    tracking?: {
                        /** @default true */
                        opens?: boolean;
                        /** @default true */
                        clicks?: boolean;
                    };
                    /** @description Refuse with 422 template_error, instead of answering a warning, when a placeholder has no value and no fallback */
                    strict?: boolean;
                };
            };
        };
        responses: {
            /** @description Accepted and queued (a test key: validated and rendered only, `sandbox: true`) */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description msg_…; with a test key a simulated sbx_… id */
                        id: string;
                        status: "queued" | "scheduled";
                        to: string;
                        subject: string;
                        /** @description Placeholders that will render empty or the fallback: unknown subscriber fields, attributes no recipient has, values missing at send time. Empty when all is well. */
                        warnings: {
                            /** @description The placeholder's path, e.g. subscriber.nmae */
                            field: string;
                            /** @description What is wrong with it, in a sentence */
                            message: string;
                        }[];
                        /** @description true for a test key: nothing was stored or sent */
                        sandbox: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    sendEmailBatch: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    emails: {
                        /** @description A bare address: name@example.com */
                        to: string;
                        from: {
                            /** @description A bare address: name@example.com */
                            email: string;
                            name?: string;
                        };
                        /** @description May contain {{variables}}; at most 998 bytes once rendered */
                        subject?: string;
                        /** @description HTML body; at most 2 MB */
                        html?: string;
                        /** @description Plain-text body; generated from html when absent */
                        text?: string;
                        /** @description A template of this account; supplies subject/html/text the request leaves out */
                        templateId?: string;
                        /** @description Values for {{merge_fields}} and [for] loops */
                        variables?: {
                            [key: string]: unknown;
                        };
                        cc?: string[];
                        bcc?: string[];
                        /** @description A bare address: name@example.com */
                        replyTo?: string;
                        headers?: {
                            [key: string]: string;
                        };
                        tags?: string[];
                        attachments?: {
                            filename: string;
                            /** @description base64 */
                            content: string;
                            contentType?: string;
                        }[];
                        /**
                         * Format: date-time
                         * @description Deliver at this time (up to 30 days ahead)
                         */
                        scheduledAt?: string;
                        /** @description Open and click tracking of this message, each on unless false; the unsubscribe footer is always added */
                        tracking?: {
                            /** @default true */
                            opens?: boolean;
                            /** @default true */
                            clicks?: boolean;
                        };
                        /** @description Refuse with 422 template_error, instead of answering a warning, when a placeholder has no value and no fallback */
                        strict?: boolean;
                    }[];
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "index": 0,
                     *           "id": "msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d",
                     *           "status": "queued",
                     *           "to": "ada@example.com",
                     *           "subject": "Hi",
                     *           "sandbox": false
                     *         },
                     *         {
                     *           "index": 1,
                     *           "error": {
                     *             "status": 422,
                     *             "code": "recipient_suppressed",
                     *             "title": "Recipient suppressed",
                     *             "detail": "bob@example.com is on this account's suppression list"
                     *           }
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        data: {
                            [key: string]: unknown;
                        }[];
                        /** @description true when a test key made the request: it was validated and answered as with a live key, and nothing was changed */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getEmail: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        /** @description queued, scheduled, sending, delivered, deferred, bounced, failed or held (a message of a paused campaign) */
                        status: string;
                        from: {
                            email: string;
                            name: string | null;
                        };
                        to: string;
                        cc: string[];
                        subject: string;
                        tags: string[];
                        templateId: string | null;
                        attempts: number;
                        lastResponse: string | null;
                        lastMx: string | null;
                        nextAttemptAt: string | null;
                        scheduledAt: string | null;
                        deliveredAt: string | null;
                        createdAt: string;
                    } & {
                        /** @description The id the send was accepted under (the `to` recipient's id) */
                        groupId: string;
                        bcc: string[];
                        /** @description Every envelope recipient of the send with its own delivery status, `to` first */
                        recipients: {
                            /** @description The recipient's own message id: its events, webhooks and bounces carry it */
                            id: string;
                            email: string;
                            type: "to" | "cc" | "bcc";
                            /** @description queued, scheduled, sending, delivered, deferred, bounced, failed, suppressed (on the suppression list: not sent) or held (a message of a paused campaign) */
                            status: string;
                            attempts: number;
                            lastResponse: string | null;
                            lastMx: string | null;
                            nextAttemptAt: string | null;
                            deliveredAt: string | null;
                            /** @description The bounce that ended this recipient's delivery, null when it did not bounce */
                            bounce: {
                                type: "hard_bounce" | "soft_bounce";
                                /** @description The bounce reason (docs/bounces.md): user_unknown, mailbox_full, blocked, … */
                                reason: string;
                                /** @description dead (suppressed), recipient, sender (our side: never suppresses) or unknown */
                                category: string;
                                status: string | null;
                                diagnostic: string | null;
                                mta: string | null;
                                occurredAt: string;
                            } | null;
                        }[];
                        html: string | null;
                        text: string | null;
                        /** @description The bounce that ended the message of the requested id, null when it did not bounce */
                        bounce: {
                            type: "hard_bounce" | "soft_bounce";
                            /** @description The bounce reason (docs/bounces.md): user_unknown, mailbox_full, blocked, … */
                            reason: string;
                            /** @description dead (suppressed), recipient, sender (our side: never suppresses) or unknown */
                            category: string;
                            status: string | null;
                            diagnostic: string | null;
                            mta: string | null;
                            occurredAt: string;
                        } | null;
                        /** @description The events of every recipient of the send, oldest first */
                        events: {
                            id: string;
                            type: string;
                            email: string;
                            messageId: string | null;
                            url?: string;
                            occurredAt: string;
                            data: {
                                [key: string]: unknown;
                            };
                            /** @description Events of campaign messages: the campaign */
                            campaignId?: string;
                        }[];
                        /** @description The source address the message of the requested id last left from (docs/sending-identity.md); null when the deployment has no sources or it has not been sent yet */
                        source: {
                            /** @description The source of the delivery policy */
                            name: string;
                            /** @description The IP address it connected from */
                            address: string;
                        } | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getEmailRawSource: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The message source */
            200: {
                headers: {
                    /** @description `captured`: the bytes as they would have left; `rebuilt`: rebuilt from stored content */
                    "Postline-Source"?: "captured" | "rebuilt";
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example Message-ID: <msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d@acme.com>
                     *     From: Acme <hello@acme.com>
                     *     To: ada@example.com
                     *     Subject: Welcome
                     *     …
                     */
                    "message/rfc822": string;
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listCapturedMessages: {
        parameters: {
            query: {
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d",
                     *           "envelopeFrom": "bounces+msg_019a…=a1b2c3d4e5f6@bounces.acme.com",
                     *           "envelopeTo": "ada@example.com",
                     *           "subject": "Welcome",
                     *           "capturedAt": "2026-11-20T10:15:30.123Z"
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** @description The message id */
                            id: string;
                            envelopeFrom: string;
                            envelopeTo: string;
                            subject: string;
                            capturedAt: string;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getCapturedMessage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The message as it would have been sent, DKIM signature included */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "message/rfc822": string;
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listTemplates: {
        parameters: {
            query: {
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
                /** @description Only templates in this folder; empty (`folder=`) = templates in no folder */
                folder?: string;
                /** @description Case-insensitive substring of the name */
                q?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of templates */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10",
                     *           "name": "Order confirmation",
                     *           "folder": "Transactional",
                     *           "subject": "Your order {{ order.number }} is confirmed",
                     *           "createdAt": "2026-11-20T10:15:30.123Z",
                     *           "updatedAt": "2026-11-21T08:02:11.456Z"
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** @description tpl_… identifier */
                            id: string;
                            name: string;
                            folder: string | null;
                            subject: string | null;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            createdAt: string;
                            /**
                             * Format: date-time
                             * @description Last change, ISO 8601 UTC with milliseconds
                             */
                            updatedAt: string;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createTemplate: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Order confirmation",
                 *       "folder": "Transactional",
                 *       "subject": "Your order {{ order.number }} is confirmed",
                 *       "html": "<p>Hi {{ first_name | there }},</p>\n<ul>[for item in order.items]<li>{{ item.name }} × {{ item.qty | 1 }}</li>[/for]</ul>",
                 *       "text": "Hi {{ first_name | there }},\n[for item in order.items]- {{ item.name }} x {{ item.qty | 1 }}\n[/for]"
                 *     }
                 */
                "application/json": {
                    /** @description 1 to 200 characters, trimmed */
                    name: string;
                    /** @description At most 200 characters, trimmed; "" or null = no folder */
                    folder?: string | null;
                    /** @description Template-language source; at most 998 bytes (UTF-8); null = none */
                    subject?: string | null;
                    /** @description Template-language source; at most 2097152 bytes (UTF-8, 2 MiB); null = none */
                    html?: string | null;
                    /** @description Template-language source; at most 2097152 bytes (UTF-8, 2 MiB); null = none */
                    text?: string | null;
                };
            };
        };
        responses: {
            /** @description The created template, with warnings for unknown subscriber fields */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10",
                     *       "name": "Order confirmation",
                     *       "folder": "Transactional",
                     *       "subject": "Your order {{ order.number }} is confirmed",
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-21T08:02:11.456Z",
                     *       "html": "<p>Hi {{ first_name | there }},</p>\n<ul>[for item in order.items]<li>{{ item.name }} × {{ item.qty | 1 }}</li>[/for]</ul>",
                     *       "text": "Hi {{ first_name | there }},\n[for item in order.items]- {{ item.name }} x {{ item.qty | 1 }}\n[/for]",
                     *       "warnings": []
                     *     }
                     */
                    "application/json": {
                        /** @description tpl_… identifier */
                        id: string;
                        name: string;
                        folder: string | null;
                        subject: string | null;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /**
                         * Format: date-time
                         * @description Last change, ISO 8601 UTC with milliseconds
                         */
                        updatedAt: string;
                        html: string | null;
                        text: string | null;
                        /** @description Placeholders that will render empty or the fallback: unknown subscriber fields, attributes no recipient has, values missing at send time. Empty when all is well. */
                        warnings: {
                            /** @description The placeholder's path, e.g. subscriber.nmae */
                            field: string;
                            /** @description What is wrong with it, in a sentence */
                            message: string;
                        }[];
                        /** @description true when a test key made the request: it was validated and answered as with a live key, and nothing was changed */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed (schema or size limits), or template_error: a syntax error in subject, html or text, with field, line and column */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listTemplateFolders: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Folders with their template counts */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "folder": "Newsletters",
                     *           "count": 4
                     *         },
                     *         {
                     *           "folder": "Transactional",
                     *           "count": 12
                     *         },
                     *         {
                     *           "folder": null,
                     *           "count": 2
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        data: {
                            folder: string | null;
                            count: number;
                        }[];
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getTemplate: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Template id (tpl_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The template, with warnings for unknown subscriber fields */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10",
                     *       "name": "Order confirmation",
                     *       "folder": "Transactional",
                     *       "subject": "Your order {{ order.number }} is confirmed",
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-21T08:02:11.456Z",
                     *       "html": "<p>Hi {{ first_name | there }},</p>\n<ul>[for item in order.items]<li>{{ item.name }} × {{ item.qty | 1 }}</li>[/for]</ul>",
                     *       "text": "Hi {{ first_name | there }},\n[for item in order.items]- {{ item.name }} x {{ item.qty | 1 }}\n[/for]",
                     *       "warnings": []
                     *     }
                     */
                    "application/json": {
                        /** @description tpl_… identifier */
                        id: string;
                        name: string;
                        folder: string | null;
                        subject: string | null;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /**
                         * Format: date-time
                         * @description Last change, ISO 8601 UTC with milliseconds
                         */
                        updatedAt: string;
                        html: string | null;
                        text: string | null;
                        /** @description Placeholders that will render empty or the fallback: unknown subscriber fields, attributes no recipient has, values missing at send time. Empty when all is well. */
                        warnings: {
                            /** @description The placeholder's path, e.g. subscriber.nmae */
                            field: string;
                            /** @description What is wrong with it, in a sentence */
                            message: string;
                        }[];
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No template with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteTemplate: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Template id (tpl_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The template was deleted */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10",
                     *       "deleted": true
                     *     }
                     */
                    "application/json": {
                        id: string;
                        /** @enum {boolean} */
                        deleted: true;
                        /** @description true when a test key made the request: it was validated and answered as with a live key, and nothing was changed */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No template with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    updateTemplate: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Template id (tpl_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description 1 to 200 characters, trimmed */
                    name?: string;
                    /** @description At most 200 characters, trimmed; "" or null = no folder */
                    folder?: string | null;
                    /** @description Template-language source; at most 998 bytes (UTF-8); null = none */
                    subject?: string | null;
                    /** @description Template-language source; at most 2097152 bytes (UTF-8, 2 MiB); null = none */
                    html?: string | null;
                    /** @description Template-language source; at most 2097152 bytes (UTF-8, 2 MiB); null = none */
                    text?: string | null;
                };
            };
        };
        responses: {
            /** @description The updated template, with warnings for unknown subscriber fields */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10",
                     *       "name": "Order confirmation",
                     *       "folder": "Archive",
                     *       "subject": "Your order {{ order.number }} is confirmed",
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-21T08:02:11.456Z",
                     *       "html": "<p>Hi {{ first_name | there }},</p>\n<ul>[for item in order.items]<li>{{ item.name }} × {{ item.qty | 1 }}</li>[/for]</ul>",
                     *       "text": "Hi {{ first_name | there }},\n[for item in order.items]- {{ item.name }} x {{ item.qty | 1 }}\n[/for]",
                     *       "warnings": []
                     *     }
                     */
                    "application/json": {
                        /** @description tpl_… identifier */
                        id: string;
                        name: string;
                        folder: string | null;
                        subject: string | null;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /**
                         * Format: date-time
                         * @description Last change, ISO 8601 UTC with milliseconds
                         */
                        updatedAt: string;
                        html: string | null;
                        text: string | null;
                        /** @description Placeholders that will render empty or the fallback: unknown subscriber fields, attributes no recipient has, values missing at send time. Empty when all is well. */
                        warnings: {
                            /** @description The placeholder's path, e.g. subscriber.nmae */
                            field: string;
                            /** @description What is wrong with it, in a sentence */
                            message: string;
                        }[];
                        /** @description true when a test key made the request: it was validated and answered as with a live key, and nothing was changed */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No template with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed (schema or size limits), or template_error: a syntax error in subject, html or text, with field, line and column */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    renderTemplate: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Template id (tpl_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Merge data, as in POST /api/v1/emails */
                    variables?: {
                        [key: string]: unknown;
                    };
                    /** @description Render as this subscriber (id or address) would get it: `subscriber.*` and `email` filled in (docs/templates.md, "Merge fields") */
                    subscriberId?: string;
                    /** @description Unsaved parts to render in place of the saved ones (an editor's live preview): same limits and syntax checks as a save; nothing is stored */
                    draft?: {
                        /** @description Template-language source; at most 998 bytes (UTF-8); null = none */
                        subject?: string | null;
                        /** @description Template-language source; at most 2097152 bytes (UTF-8, 2 MiB); null = none */
                        html?: string | null;
                        /** @description Template-language source; at most 2097152 bytes (UTF-8, 2 MiB); null = none */
                        text?: string | null;
                    };
                };
            };
        };
        responses: {
            /** @description The rendered parts; null for a part the template lacks */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "subject": "Your order A-1001 is confirmed",
                     *       "html": "<p>Hi Ada,</p>\n<ul><li>Lamp × 2</li><li>Bulb × 1</li></ul>",
                     *       "text": "Hi Ada,\n- Lamp x 2\n- Bulb x 1\n",
                     *       "warnings": []
                     *     }
                     */
                    "application/json": {
                        subject: string | null;
                        html: string | null;
                        text: string | null;
                        /** @description Placeholders that will render empty or the fallback: unknown subscriber fields, attributes no recipient has, values missing at send time. Empty when all is well. */
                        warnings: {
                            /** @description The placeholder's path, e.g. subscriber.nmae */
                            field: string;
                            /** @description What is wrong with it, in a sentence */
                            message: string;
                        }[];
                        /** @description true when a test key made the request: it was validated and answered as with a live key, and nothing was changed */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No template with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed (schema or size limits), or template_error: a syntax error in subject, html or text, with field, line and column */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listSuppressions: {
        parameters: {
            query: {
                /** @description Check this one address instead of listing */
                email?: string;
                /** @description manual (default; added through the API or dashboard), unsubscribe, hard_bounce, complaint, import */
                reason?: "manual" | "unsubscribe" | "hard_bounce" | "complaint" | "import";
                /** @description Case-insensitive substring of the address */
                q?: string;
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description With email: the check result. Without: one page of entries */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description The address asked about, as given */
                        email: string;
                        suppressed: boolean;
                        reason: ("manual" | "unsubscribe" | "hard_bounce" | "complaint" | "import") | null;
                        createdAt: string | null;
                    } | {
                        data: {
                            /** @description sup_… identifier */
                            id: string;
                            /** @description The address as it was first added */
                            email: string;
                            /**
                             * @description manual (default; added through the API or dashboard), unsubscribe, hard_bounce, complaint, import
                             * @enum {unknown}
                             */
                            reason: "manual" | "unsubscribe" | "hard_bounce" | "complaint" | "import";
                            /** @description Why, when known: e.g. the SMTP response of a hard bounce */
                            detail: string | null;
                            /** @description For hard_bounce: the bounce reason that showed the address dead (user_unknown, host_unknown, has_moved, not_accept; see docs/bounces.md), else null */
                            bounceReason: string | null;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            createdAt: string;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createSuppressions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Either `email` (one address) or `entries` (bulk), not both. */
        requestBody: {
            content: {
                "application/json": {
                    /** @description A bare address (name@example.com); matched case-insensitively */
                    email?: string;
                    /**
                     * @description manual (default; added through the API or dashboard), unsubscribe, hard_bounce, complaint, import
                     * @enum {unknown}
                     */
                    reason?: "manual" | "unsubscribe" | "hard_bounce" | "complaint" | "import";
                    /** @description Bulk form: up to 10000 entries, added atomically; an entry without reason takes the top-level reason (default manual) */
                    entries?: {
                        email: string;
                        /**
                         * @description manual (default; added through the API or dashboard), unsubscribe, hard_bounce, complaint, import
                         * @enum {unknown}
                         */
                        reason?: "manual" | "unsubscribe" | "hard_bounce" | "complaint" | "import";
                    }[];
                };
            };
        };
        responses: {
            /** @description Single form: the address was already suppressed, the existing entry unchanged. Bulk form: the counts */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description sup_… identifier */
                        id: string;
                        /** @description The address as it was first added */
                        email: string;
                        /**
                         * @description manual (default; added through the API or dashboard), unsubscribe, hard_bounce, complaint, import
                         * @enum {unknown}
                         */
                        reason: "manual" | "unsubscribe" | "hard_bounce" | "complaint" | "import";
                        /** @description Why, when known: e.g. the SMTP response of a hard bounce */
                        detail: string | null;
                        /** @description For hard_bounce: the bounce reason that showed the address dead (user_unknown, host_unknown, has_moved, not_accept; see docs/bounces.md), else null */
                        bounceReason: string | null;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                    } | {
                        /** @description Addresses added */
                        created: number;
                        /** @description Entries whose address was already on the list (repeats within the batch included) */
                        existing: number;
                    };
                };
            };
            /** @description The address was added */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "sup_019a6f0c3b2e7d1a9c4b5e6f7a8b9c11",
                     *       "email": "Jane.Doe@example.com",
                     *       "reason": "manual",
                     *       "detail": null,
                     *       "bounceReason": null,
                     *       "createdAt": "2026-11-20T10:15:30.123Z"
                     *     }
                     */
                    "application/json": {
                        /** @description sup_… identifier */
                        id: string;
                        /** @description The address as it was first added */
                        email: string;
                        /**
                         * @description manual (default; added through the API or dashboard), unsubscribe, hard_bounce, complaint, import
                         * @enum {unknown}
                         */
                        reason: "manual" | "unsubscribe" | "hard_bounce" | "complaint" | "import";
                        /** @description Why, when known: e.g. the SMTP response of a hard bounce */
                        detail: string | null;
                        /** @description For hard_bounce: the bounce reason that showed the address dead (user_unknown, host_unknown, has_moved, not_accept; see docs/bounces.md), else null */
                        bounceReason: string | null;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /** @description true when a test key made the request: it was validated and answered as with a live key, and nothing was changed */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Invalid address or reason; for the bulk form one error per bad entry, and nothing added */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteSuppression: {
        parameters: {
            query: {
                /** @description A bare address (name@example.com); matched case-insensitively */
                email: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The address was removed from the list */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "email": "jane.doe@example.com",
                     *       "suppressed": false
                     *     }
                     */
                    "application/json": {
                        /** @description The address, as given */
                        email: string;
                        /** @enum {boolean} */
                        suppressed: false;
                        /** @description true when a test key made the request: it was validated and answered as with a live key, and nothing was changed */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The address was not suppressed */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listHooks: {
        parameters: {
            query: {
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "hook_019a6f0c3b2e7d1a9c4b5e6f7a8b9c11",
                     *           "url": "https://example.com/webhooks/postline",
                     *           "events": [
                     *             "hard_bounce",
                     *             "soft_bounce",
                     *             "spam"
                     *           ],
                     *           "status": "active",
                     *           "disabledReason": null,
                     *           "createdAt": "2026-11-20T10:15:30.123Z"
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** @description hook_… identifier */
                            id: string;
                            /** @description Where batches are POSTed */
                            url: string;
                            /** @description Event types delivered to this hook */
                            events: ("sent" | "delivered" | "open" | "click" | "hard_bounce" | "soft_bounce" | "spam" | "unsubscribe" | "deferred")[];
                            /** @description `disabled` after a 410 Gone or when retries are exhausted; a disabled hook receives nothing */
                            status: "active" | "disabled";
                            disabledReason: string | null;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            createdAt: string;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createHook: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "url": "https://example.com/webhooks/postline",
                 *       "events": [
                 *         "bounce",
                 *         "complaint"
                 *       ]
                 *     }
                 */
                "application/json": {
                    /** @description http(s) URL, at most 2048 characters, no credentials; its host must resolve to public addresses only */
                    url: string;
                    /** @description Event types (sent, delivered, open, click, hard_bounce, soft_bounce, spam, unsubscribe, deferred) and short names (bounce = hard_bounce + soft_bounce, complaint = spam, unsub = unsubscribe); stored as types */
                    events: string[];
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "hook_019a6f0c3b2e7d1a9c4b5e6f7a8b9c11",
                     *       "url": "https://example.com/webhooks/postline",
                     *       "events": [
                     *         "hard_bounce",
                     *         "soft_bounce",
                     *         "spam"
                     *       ],
                     *       "secret": "whsec_Q2hhbmdlIG1lOiB0aGlzIGlzIGFuIGV4YW1wbGUgc2VjcmV0IQ",
                     *       "createdAt": "2026-11-20T10:15:30.123Z"
                     *     }
                     */
                    "application/json": {
                        /** @description hook_… identifier */
                        id: string;
                        /** @description Where batches are POSTed */
                        url: string;
                        /** @description Event types delivered to this hook */
                        events: ("sent" | "delivered" | "open" | "click" | "hard_bounce" | "soft_bounce" | "spam" | "unsubscribe" | "deferred")[];
                        /** @description Signing secret (`whsec_…`): HMAC-SHA256 key for X-SVC-Signature. Shown only here and on rotation */
                        secret: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /** @description true when a test key made the request: it was validated and answered as with a live key, and nothing was changed */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed: an unknown event name, no events, or a URL that is not http(s), carries credentials, or points at a private address */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getHook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Hook id (hook_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description hook_… identifier */
                        id: string;
                        /** @description Where batches are POSTed */
                        url: string;
                        /** @description Event types delivered to this hook */
                        events: ("sent" | "delivered" | "open" | "click" | "hard_bounce" | "soft_bounce" | "spam" | "unsubscribe" | "deferred")[];
                        /** @description `disabled` after a 410 Gone or when retries are exhausted; a disabled hook receives nothing */
                        status: "active" | "disabled";
                        disabledReason: string | null;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No hook with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteHook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Hook id (hook_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No hook with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listHookDeliveries: {
        parameters: {
            query: {
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path: {
                /** @description Hook id (hook_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "dlv_019a6f0d2c4e7a1b8c9d0e1f2a3b4c5d",
                     *           "attemptedAt": "2026-11-20T10:16:02.481Z",
                     *           "attempt": 2,
                     *           "outcome": "delivered",
                     *           "statusCode": 200,
                     *           "durationMs": 87,
                     *           "eventCount": 500,
                     *           "firstEventId": "evt_019a6f0d1a2b7c3d8e9f0a1b2c3d4e5f",
                     *           "lastEventId": "evt_019a6f0d1b9c7d0e8f1a2b3c4d5e6f70",
                     *           "error": null,
                     *           "nextAttemptAt": null
                     *         },
                     *         {
                     *           "id": "dlv_019a6f0d0b1c7d2e8f3a4b5c6d7e8f90",
                     *           "attemptedAt": "2026-11-20T10:15:52.102Z",
                     *           "attempt": 1,
                     *           "outcome": "retrying",
                     *           "statusCode": 503,
                     *           "durationMs": 12,
                     *           "eventCount": 500,
                     *           "firstEventId": "evt_019a6f0d1a2b7c3d8e9f0a1b2c3d4e5f",
                     *           "lastEventId": "evt_019a6f0d1b9c7d0e8f1a2b3c4d5e6f70",
                     *           "error": "HTTP 503: upstream unavailable",
                     *           "nextAttemptAt": "2026-11-20T10:16:02.102Z"
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** @description dlv_… identifier of the attempt */
                            id: string;
                            /**
                             * Format: date-time
                             * @description When the request was sent
                             */
                            attemptedAt: string;
                            /** @description Attempt number of this batch, from 1 */
                            attempt: number;
                            /**
                             * @description `delivered` (2xx); `retrying` (5xx, 408, 429, timeout, connection error: sent again at nextAttemptAt); `failed` (other 4xx or 3xx: batch dropped); `disabled` (410 Gone or retries exhausted); `test` (POST …/test)
                             * @enum {string}
                             */
                            outcome: "delivered" | "retrying" | "failed" | "disabled" | "test";
                            /** @description HTTP status; null when no response arrived */
                            statusCode: number | null;
                            /** @description Milliseconds from connect to the end of the response */
                            durationMs: number;
                            /** @description Events in the batch */
                            eventCount: number;
                            firstEventId: string | null;
                            lastEventId: string | null;
                            error: string | null;
                            nextAttemptAt: string | null;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No hook with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    enableHook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Hook id (hook_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The hook, now active */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "hook_019a6f0c3b2e7d1a9c4b5e6f7a8b9c11",
                     *       "url": "https://example.com/webhooks/postline",
                     *       "events": [
                     *         "hard_bounce",
                     *         "soft_bounce",
                     *         "spam"
                     *       ],
                     *       "status": "active",
                     *       "disabledReason": null,
                     *       "createdAt": "2026-11-20T10:15:30.123Z"
                     *     }
                     */
                    "application/json": {
                        /** @description hook_… identifier */
                        id: string;
                        /** @description Where batches are POSTed */
                        url: string;
                        /** @description Event types delivered to this hook */
                        events: ("sent" | "delivered" | "open" | "click" | "hard_bounce" | "soft_bounce" | "spam" | "unsubscribe" | "deferred")[];
                        /** @description `disabled` after a 410 Gone or when retries are exhausted; a disabled hook receives nothing */
                        status: "active" | "disabled";
                        disabledReason: string | null;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /** @description true when a test key made the request: it was validated and answered as with a live key, and nothing was changed */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No hook with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    rotateHookSecret: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Hook id (hook_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "secret": "whsec_Q2hhbmdlIG1lOiB0aGlzIGlzIGFuIGV4YW1wbGUgc2VjcmV0IQ"
                     *     }
                     */
                    "application/json": {
                        /** @description Signing secret (`whsec_…`): HMAC-SHA256 key for X-SVC-Signature. Shown only here and on rotation */
                        secret: string;
                        /** @description true when a test key made the request: it was validated and answered as with a live key, and nothing was changed */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No hook with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    testHook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Hook id (hook_…) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "delivered": true,
                     *       "statusCode": 200,
                     *       "durationMs": 41,
                     *       "error": null,
                     *       "event": {
                     *         "id": "evt_019a6f0e5d6c7b8a9f0e1d2c3b4a5f6e",
                     *         "type": "hard_bounce",
                     *         "email": "recipient@example.com",
                     *         "messageId": "msg_019a6f0e5d6c7b8a9f0e1d2c3b4a5f6f",
                     *         "occurredAt": "2026-11-20T10:20:00.000Z",
                     *         "data": {
                     *           "test": true
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": {
                        /** @description true when the receiver answered 2xx */
                        delivered: boolean;
                        statusCode: number | null;
                        durationMs: number;
                        error: string | null;
                        /** @description The made-up event that was sent (data.test = true) */
                        event: {
                            id: string;
                            type: string;
                            email: string;
                            messageId: string | null;
                            url?: string;
                            occurredAt: string;
                            data: {
                                [key: string]: unknown;
                            };
                        };
                        /** @description true when a test key made the request: it was validated and answered as with a live key, and nothing was changed */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No hook with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listLists: {
        parameters: {
            query: {
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01",
                     *           "name": "Newsletter",
                     *           "description": "Monthly product news",
                     *           "doubleOptIn": true,
                     *           "confirmationTemplateId": null,
                     *           "subscriberCount": 1280,
                     *           "createdAt": "2026-11-20T10:15:30.123Z",
                     *           "updatedAt": "2026-11-20T10:15:30.123Z"
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** @description lst_… */
                            id: string;
                            name: string;
                            description: string | null;
                            /** @description New members get a confirmation mail and stay unconfirmed until they follow its link */
                            doubleOptIn: boolean;
                            /** @description Template of the confirmation mail; null = built-in */
                            confirmationTemplateId: string | null;
                            /** @description Members, whatever their status */
                            subscriberCount: number;
                            /** Format: date-time */
                            createdAt: string;
                            /** Format: date-time */
                            updatedAt: string;
                            /** @description Present (true) when a test key made the request: nothing was stored */
                            sandbox?: boolean;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createList: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Newsletter",
                 *       "description": "Monthly product news",
                 *       "doubleOptIn": true
                 *     }
                 */
                "application/json": {
                    name: string;
                    description?: null | string;
                    doubleOptIn?: boolean;
                    confirmationTemplateId?: null | string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01",
                     *       "name": "Newsletter",
                     *       "description": "Monthly product news",
                     *       "doubleOptIn": true,
                     *       "confirmationTemplateId": null,
                     *       "subscriberCount": 0,
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-20T10:15:30.123Z"
                     *     }
                     */
                    "application/json": {
                        /** @description lst_… */
                        id: string;
                        name: string;
                        description: string | null;
                        /** @description New members get a confirmation mail and stay unconfirmed until they follow its link */
                        doubleOptIn: boolean;
                        /** @description Template of the confirmation mail; null = built-in */
                        confirmationTemplateId: string | null;
                        /** @description Members, whatever their status */
                        subscriberCount: number;
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed: a field is missing, unknown, or out of its limits */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getList: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01",
                     *       "name": "Newsletter",
                     *       "description": "Monthly product news",
                     *       "doubleOptIn": true,
                     *       "confirmationTemplateId": null,
                     *       "subscriberCount": 1280,
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-20T10:15:30.123Z"
                     *     }
                     */
                    "application/json": {
                        /** @description lst_… */
                        id: string;
                        name: string;
                        description: string | null;
                        /** @description New members get a confirmation mail and stay unconfirmed until they follow its link */
                        doubleOptIn: boolean;
                        /** @description Template of the confirmation mail; null = built-in */
                        confirmationTemplateId: string | null;
                        /** @description Members, whatever their status */
                        subscriberCount: number;
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No list with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteList: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No list with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    updateList: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name?: string;
                    description?: null | string;
                    doubleOptIn?: boolean;
                    confirmationTemplateId?: null | string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01",
                     *       "name": "Newsletter",
                     *       "description": "Monthly product news",
                     *       "doubleOptIn": true,
                     *       "confirmationTemplateId": null,
                     *       "subscriberCount": 1280,
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-20T10:15:30.123Z"
                     *     }
                     */
                    "application/json": {
                        /** @description lst_… */
                        id: string;
                        name: string;
                        description: string | null;
                        /** @description New members get a confirmation mail and stay unconfirmed until they follow its link */
                        doubleOptIn: boolean;
                        /** @description Template of the confirmation mail; null = built-in */
                        confirmationTemplateId: string | null;
                        /** @description Members, whatever their status */
                        subscriberCount: number;
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No list with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed: a field is missing, unknown, or out of its limits */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listSubscribers: {
        parameters: {
            query: {
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
                /** @description Only members of this list */
                list?: string;
                /** @description active; unconfirmed (double opt-in pending); unsubscribed, bounced, complained (also imposed by a suppression) */
                status?: "active" | "unconfirmed" | "unsubscribed" | "bounced" | "complained";
                /** @description Email or name contains (case-insensitive) */
                q?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "sub_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10",
                     *           "email": "ada@example.com",
                     *           "name": "Ada Lovelace",
                     *           "status": "active",
                     *           "attributes": {
                     *             "plan": "pro",
                     *             "signupSource": "webinar"
                     *           },
                     *           "lists": [
                     *             "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *           ],
                     *           "createdAt": "2026-11-20T10:15:30.123Z",
                     *           "updatedAt": "2026-11-20T10:15:30.123Z"
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** @description sub_…; time-ordered, never reused */
                            id: string;
                            email: string;
                            name: string | null;
                            /** @description active; unconfirmed (double opt-in pending); unsubscribed, bounced, complained (also imposed by a suppression) */
                            status: "active" | "unconfirmed" | "unsubscribed" | "bounced" | "complained";
                            /** @description Free-form JSON object of custom fields (merge fields, segment conditions) */
                            attributes: {
                                [key: string]: unknown;
                            };
                            /** @description Ids of the lists the subscriber is in */
                            lists: string[];
                            /** Format: date-time */
                            createdAt: string;
                            /** Format: date-time */
                            updatedAt: string;
                            /** @description Present (true) when a test key made the request: nothing was stored */
                            sandbox?: boolean;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    upsertSubscriber: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "email": "ada@example.com",
                 *       "name": "Ada Lovelace",
                 *       "list": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01",
                 *       "attributes": {
                 *         "plan": "pro"
                 *       }
                 *     }
                 */
                "application/json": {
                    email: string;
                    name?: null | string;
                    /** @description Id of a list to add the subscriber to */
                    list?: string;
                    lists?: string[];
                    /** @description Free-form JSON object of custom fields (merge fields, segment conditions) */
                    attributes?: {
                        [key: string]: unknown;
                    };
                    status?: "active" | "unconfirmed" | "unsubscribed";
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "sub_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10",
                     *       "email": "ada@example.com",
                     *       "name": "Ada King",
                     *       "status": "active",
                     *       "attributes": {
                     *         "plan": "pro",
                     *         "signupSource": "webinar"
                     *       },
                     *       "lists": [
                     *         "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *       ],
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-20T10:15:30.123Z"
                     *     }
                     */
                    "application/json": {
                        /** @description sub_…; time-ordered, never reused */
                        id: string;
                        email: string;
                        name: string | null;
                        /** @description active; unconfirmed (double opt-in pending); unsubscribed, bounced, complained (also imposed by a suppression) */
                        status: "active" | "unconfirmed" | "unsubscribed" | "bounced" | "complained";
                        /** @description Free-form JSON object of custom fields (merge fields, segment conditions) */
                        attributes: {
                            [key: string]: unknown;
                        };
                        /** @description Ids of the lists the subscriber is in */
                        lists: string[];
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "sub_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10",
                     *       "email": "ada@example.com",
                     *       "name": "Ada Lovelace",
                     *       "status": "active",
                     *       "attributes": {
                     *         "plan": "pro",
                     *         "signupSource": "webinar"
                     *       },
                     *       "lists": [
                     *         "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *       ],
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-20T10:15:30.123Z"
                     *     }
                     */
                    "application/json": {
                        /** @description sub_…; time-ordered, never reused */
                        id: string;
                        email: string;
                        name: string | null;
                        /** @description active; unconfirmed (double opt-in pending); unsubscribed, bounced, complained (also imposed by a suppression) */
                        status: "active" | "unconfirmed" | "unsubscribed" | "bounced" | "complained";
                        /** @description Free-form JSON object of custom fields (merge fields, segment conditions) */
                        attributes: {
                            [key: string]: unknown;
                        };
                        /** @description Ids of the lists the subscriber is in */
                        lists: string[];
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed: e.g. an invalid address, an unknown list, a status only the system sets */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getSubscriber: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description sub_… id or the email address */
                idOrEmail: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "sub_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10",
                     *       "email": "ada@example.com",
                     *       "name": "Ada Lovelace",
                     *       "status": "active",
                     *       "attributes": {
                     *         "plan": "pro",
                     *         "signupSource": "webinar"
                     *       },
                     *       "lists": [
                     *         "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *       ],
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-20T10:15:30.123Z"
                     *     }
                     */
                    "application/json": {
                        /** @description sub_…; time-ordered, never reused */
                        id: string;
                        email: string;
                        name: string | null;
                        /** @description active; unconfirmed (double opt-in pending); unsubscribed, bounced, complained (also imposed by a suppression) */
                        status: "active" | "unconfirmed" | "unsubscribed" | "bounced" | "complained";
                        /** @description Free-form JSON object of custom fields (merge fields, segment conditions) */
                        attributes: {
                            [key: string]: unknown;
                        };
                        /** @description Ids of the lists the subscriber is in */
                        lists: string[];
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No subscriber with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteSubscriber: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description sub_… id or the email address */
                idOrEmail: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No subscriber with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    updateSubscriber: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description sub_… id or the email address */
                idOrEmail: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    email?: string;
                    name?: null | string;
                    status?: "active" | "unconfirmed" | "unsubscribed";
                    /** @description Merged into the stored attributes; a null value removes that key */
                    attributes?: {
                        [key: string]: unknown;
                    };
                    /** @description A list to add */
                    list?: string;
                    addLists?: string[];
                    removeLists?: string[];
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "sub_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10",
                     *       "email": "ada@example.com",
                     *       "name": "Ada Lovelace",
                     *       "status": "active",
                     *       "attributes": {
                     *         "plan": "pro",
                     *         "signupSource": "webinar"
                     *       },
                     *       "lists": [
                     *         "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *       ],
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-20T10:15:30.123Z"
                     *     }
                     */
                    "application/json": {
                        /** @description sub_…; time-ordered, never reused */
                        id: string;
                        email: string;
                        name: string | null;
                        /** @description active; unconfirmed (double opt-in pending); unsubscribed, bounced, complained (also imposed by a suppression) */
                        status: "active" | "unconfirmed" | "unsubscribed" | "bounced" | "complained";
                        /** @description Free-form JSON object of custom fields (merge fields, segment conditions) */
                        attributes: {
                            [key: string]: unknown;
                        };
                        /** @description Ids of the lists the subscriber is in */
                        lists: string[];
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No subscriber with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Another subscriber already has the new address */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed as for create; recipient_suppressed when the status contradicts a suppression of the address */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    confirmSubscription: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The signed token */
                token: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Confirmed (or already confirmed) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description Invalid or expired link */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
        };
    };
    importSubscribers: {
        parameters: {
            query?: {
                /** @description List id, for text/csv bodies */
                list?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Id of the list to import into */
                    list: string;
                    /** @description Rows {email, name?, status?, attributes?, …}; at most 100000 */
                    subscribers?: unknown[];
                    /** @description CSV text with a header row (email required; name, status; other columns become attributes) */
                    csv?: string;
                };
                /**
                 * @example email,name,plan
                 *     ada@example.com,Ada,pro
                 */
                "text/csv": string;
            };
        };
        responses: {
            /** @description Default Response */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "imp_019a6f0c3b2e7d1a9c4b5e6f7a8b9c30",
                     *       "listId": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01",
                     *       "status": "queued",
                     *       "total": 25000,
                     *       "processed": 0,
                     *       "created": 0,
                     *       "updated": 0,
                     *       "skipped": 0,
                     *       "errorCount": 0,
                     *       "errors": [],
                     *       "failure": null,
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "startedAt": null,
                     *       "finishedAt": null
                     *     }
                     */
                    "application/json": {
                        /** @description imp_… */
                        id: string;
                        listId: string | null;
                        status: "queued" | "running" | "completed" | "failed";
                        /** @description Rows in the import */
                        total: number;
                        /** @description Rows done so far */
                        processed: number;
                        created: number;
                        /** @description Rows whose address already existed */
                        updated: number;
                        /** @description Rows refused; see errors */
                        skipped: number;
                        errorCount: number;
                        /** @description Row errors, the first 1,000 */
                        errors: {
                            /** @description 1-based data row (a CSV header is not a row) */
                            row: number;
                            email?: string;
                            message: string;
                        }[];
                        /** @description Why the job failed or was retried */
                        failure: string | null;
                        /** Format: date-time */
                        createdAt: string;
                        startedAt: string | null;
                        finishedAt: string | null;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed: more than 100,000 rows, no email column, not CSV / not an array, an unknown list */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listImports: {
        parameters: {
            query: {
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "imp_019a6f0c3b2e7d1a9c4b5e6f7a8b9c30",
                     *           "listId": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01",
                     *           "status": "running",
                     *           "total": 25000,
                     *           "processed": 12000,
                     *           "created": 11800,
                     *           "updated": 190,
                     *           "skipped": 10,
                     *           "errorCount": 10,
                     *           "errors": [
                     *             {
                     *               "row": 17,
                     *               "email": "bob@@example.com",
                     *               "message": "email: is not an email address"
                     *             }
                     *           ],
                     *           "failure": null,
                     *           "createdAt": "2026-11-20T10:15:30.123Z",
                     *           "startedAt": "2026-11-20T10:15:31.002Z",
                     *           "finishedAt": null
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** @description imp_… */
                            id: string;
                            listId: string | null;
                            status: "queued" | "running" | "completed" | "failed";
                            /** @description Rows in the import */
                            total: number;
                            /** @description Rows done so far */
                            processed: number;
                            created: number;
                            /** @description Rows whose address already existed */
                            updated: number;
                            /** @description Rows refused; see errors */
                            skipped: number;
                            errorCount: number;
                            /** @description Row errors, the first 1,000 */
                            errors: {
                                /** @description 1-based data row (a CSV header is not a row) */
                                row: number;
                                email?: string;
                                message: string;
                            }[];
                            /** @description Why the job failed or was retried */
                            failure: string | null;
                            /** Format: date-time */
                            createdAt: string;
                            startedAt: string | null;
                            finishedAt: string | null;
                            /** @description Present (true) when a test key made the request: nothing was stored */
                            sandbox?: boolean;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getImport: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "imp_019a6f0c3b2e7d1a9c4b5e6f7a8b9c30",
                     *       "listId": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01",
                     *       "status": "running",
                     *       "total": 25000,
                     *       "processed": 12000,
                     *       "created": 11800,
                     *       "updated": 190,
                     *       "skipped": 10,
                     *       "errorCount": 10,
                     *       "errors": [
                     *         {
                     *           "row": 17,
                     *           "email": "bob@@example.com",
                     *           "message": "email: is not an email address"
                     *         }
                     *       ],
                     *       "failure": null,
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "startedAt": "2026-11-20T10:15:31.002Z",
                     *       "finishedAt": null
                     *     }
                     */
                    "application/json": {
                        /** @description imp_… */
                        id: string;
                        listId: string | null;
                        status: "queued" | "running" | "completed" | "failed";
                        /** @description Rows in the import */
                        total: number;
                        /** @description Rows done so far */
                        processed: number;
                        created: number;
                        /** @description Rows whose address already existed */
                        updated: number;
                        /** @description Rows refused; see errors */
                        skipped: number;
                        errorCount: number;
                        /** @description Row errors, the first 1,000 */
                        errors: {
                            /** @description 1-based data row (a CSV header is not a row) */
                            row: number;
                            email?: string;
                            message: string;
                        }[];
                        /** @description Why the job failed or was retried */
                        failure: string | null;
                        /** Format: date-time */
                        createdAt: string;
                        startedAt: string | null;
                        finishedAt: string | null;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No import with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listSegments: {
        parameters: {
            query: {
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "seg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *           "name": "Engaged paying newsletter readers",
                     *           "match": "all",
                     *           "conditions": [
                     *             {
                     *               "field": "list",
                     *               "op": "eq",
                     *               "value": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *             },
                     *             {
                     *               "field": "status",
                     *               "op": "eq",
                     *               "value": "active"
                     *             },
                     *             {
                     *               "match": "any",
                     *               "conditions": [
                     *                 {
                     *                   "field": "attributes.plan",
                     *                   "op": "in",
                     *                   "value": [
                     *                     "pro",
                     *                     "team"
                     *                   ]
                     *                 },
                     *                 {
                     *                   "field": "opened",
                     *                   "op": "within",
                     *                   "value": 30
                     *                 }
                     *               ]
                     *             }
                     *           ],
                     *           "subscriberCount": 412,
                     *           "createdAt": "2026-11-20T10:15:30.123Z",
                     *           "updatedAt": "2026-11-20T10:15:30.123Z"
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** @description seg_… */
                            id: string;
                            name: string;
                            /** @description all = AND, any = OR */
                            match: "all" | "any";
                            /** @description Conditions {field, op, value} or nested groups {match, conditions}. Fields: email, name, status, createdAt, list, attributes.<key>, opened, clicked, received. Ops: eq, neq, contains, starts_with, gt, gte, lt, lte, in, exists, not_exists, within, not_within. See docs/audience.md for which op applies to which field. */
                            conditions: unknown[];
                            /** @description Subscribers matching now (live), whatever their status */
                            subscriberCount: number;
                            /** Format: date-time */
                            createdAt: string;
                            /** Format: date-time */
                            updatedAt: string;
                            /** @description Present (true) when a test key made the request: nothing was stored */
                            sandbox?: boolean;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createSegment: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Engaged paying newsletter readers",
                 *       "match": "all",
                 *       "conditions": [
                 *         {
                 *           "field": "list",
                 *           "op": "eq",
                 *           "value": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                 *         },
                 *         {
                 *           "field": "status",
                 *           "op": "eq",
                 *           "value": "active"
                 *         },
                 *         {
                 *           "match": "any",
                 *           "conditions": [
                 *             {
                 *               "field": "attributes.plan",
                 *               "op": "in",
                 *               "value": [
                 *                 "pro",
                 *                 "team"
                 *               ]
                 *             },
                 *             {
                 *               "field": "opened",
                 *               "op": "within",
                 *               "value": 30
                 *             }
                 *           ]
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    name: string;
                    /** @description all = AND, any = OR */
                    match?: "all" | "any";
                    /** @description Conditions {field, op, value} or nested groups {match, conditions}. Fields: email, name, status, createdAt, list, attributes.<key>, opened, clicked, received. Ops: eq, neq, contains, starts_with, gt, gte, lt, lte, in, exists, not_exists, within, not_within. See docs/audience.md for which op applies to which field. */
                    conditions: unknown[];
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "seg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *       "name": "Engaged paying newsletter readers",
                     *       "match": "all",
                     *       "conditions": [
                     *         {
                     *           "field": "list",
                     *           "op": "eq",
                     *           "value": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *         },
                     *         {
                     *           "field": "status",
                     *           "op": "eq",
                     *           "value": "active"
                     *         },
                     *         {
                     *           "match": "any",
                     *           "conditions": [
                     *             {
                     *               "field": "attributes.plan",
                     *               "op": "in",
                     *               "value": [
                     *                 "pro",
                     *                 "team"
                     *               ]
                     *             },
                     *             {
                     *               "field": "opened",
                     *               "op": "within",
                     *               "value": 30
                     *             }
                     *           ]
                     *         }
                     *       ],
                     *       "subscriberCount": 412,
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-20T10:15:30.123Z"
                     *     }
                     */
                    "application/json": {
                        /** @description seg_… */
                        id: string;
                        name: string;
                        /** @description all = AND, any = OR */
                        match: "all" | "any";
                        /** @description Conditions {field, op, value} or nested groups {match, conditions}. Fields: email, name, status, createdAt, list, attributes.<key>, opened, clicked, received. Ops: eq, neq, contains, starts_with, gt, gte, lt, lte, in, exists, not_exists, within, not_within. See docs/audience.md for which op applies to which field. */
                        conditions: unknown[];
                        /** @description Subscribers matching now (live), whatever their status */
                        subscriberCount: number;
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed: an unknown field or op, an op that does not apply to the field, or a value of the wrong type, named by its path */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    countSegment: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "match": "all",
                 *       "conditions": [
                 *         {
                 *           "field": "attributes.plan",
                 *           "op": "eq",
                 *           "value": "pro"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    /** @description all = AND, any = OR */
                    match?: "all" | "any";
                    /** @description Conditions {field, op, value} or nested groups {match, conditions}. Fields: email, name, status, createdAt, list, attributes.<key>, opened, clicked, received. Ops: eq, neq, contains, starts_with, gt, gte, lt, lte, in, exists, not_exists, within, not_within. See docs/audience.md for which op applies to which field. */
                    conditions: unknown[];
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "subscriberCount": 412
                     *     }
                     */
                    "application/json": {
                        /** @description Subscribers matching now */
                        subscriberCount: number;
                        /** @description true when a test key made the request: it was validated and answered as with a live key, and nothing was changed */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed: an unknown field or op, an op that does not apply to the field, or a value of the wrong type, named by its path */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getSegment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "seg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *       "name": "Engaged paying newsletter readers",
                     *       "match": "all",
                     *       "conditions": [
                     *         {
                     *           "field": "list",
                     *           "op": "eq",
                     *           "value": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *         },
                     *         {
                     *           "field": "status",
                     *           "op": "eq",
                     *           "value": "active"
                     *         },
                     *         {
                     *           "match": "any",
                     *           "conditions": [
                     *             {
                     *               "field": "attributes.plan",
                     *               "op": "in",
                     *               "value": [
                     *                 "pro",
                     *                 "team"
                     *               ]
                     *             },
                     *             {
                     *               "field": "opened",
                     *               "op": "within",
                     *               "value": 30
                     *             }
                     *           ]
                     *         }
                     *       ],
                     *       "subscriberCount": 412,
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-20T10:15:30.123Z"
                     *     }
                     */
                    "application/json": {
                        /** @description seg_… */
                        id: string;
                        name: string;
                        /** @description all = AND, any = OR */
                        match: "all" | "any";
                        /** @description Conditions {field, op, value} or nested groups {match, conditions}. Fields: email, name, status, createdAt, list, attributes.<key>, opened, clicked, received. Ops: eq, neq, contains, starts_with, gt, gte, lt, lte, in, exists, not_exists, within, not_within. See docs/audience.md for which op applies to which field. */
                        conditions: unknown[];
                        /** @description Subscribers matching now (live), whatever their status */
                        subscriberCount: number;
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No segment with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteSegment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No segment with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    updateSegment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name?: string;
                    /** @description all = AND, any = OR */
                    match?: "all" | "any";
                    /** @description Conditions {field, op, value} or nested groups {match, conditions}. Fields: email, name, status, createdAt, list, attributes.<key>, opened, clicked, received. Ops: eq, neq, contains, starts_with, gt, gte, lt, lte, in, exists, not_exists, within, not_within. See docs/audience.md for which op applies to which field. */
                    conditions?: unknown[];
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "seg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *       "name": "Engaged paying newsletter readers",
                     *       "match": "all",
                     *       "conditions": [
                     *         {
                     *           "field": "list",
                     *           "op": "eq",
                     *           "value": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *         },
                     *         {
                     *           "field": "status",
                     *           "op": "eq",
                     *           "value": "active"
                     *         },
                     *         {
                     *           "match": "any",
                     *           "conditions": [
                     *             {
                     *               "field": "attributes.plan",
                     *               "op": "in",
                     *               "value": [
                     *                 "pro",
                     *                 "team"
                     *               ]
                     *             },
                     *             {
                     *               "field": "opened",
                     *               "op": "within",
                     *               "value": 30
                     *             }
                     *           ]
                     *         }
                     *       ],
                     *       "subscriberCount": 412,
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-20T10:15:30.123Z"
                     *     }
                     */
                    "application/json": {
                        /** @description seg_… */
                        id: string;
                        name: string;
                        /** @description all = AND, any = OR */
                        match: "all" | "any";
                        /** @description Conditions {field, op, value} or nested groups {match, conditions}. Fields: email, name, status, createdAt, list, attributes.<key>, opened, clicked, received. Ops: eq, neq, contains, starts_with, gt, gte, lt, lte, in, exists, not_exists, within, not_within. See docs/audience.md for which op applies to which field. */
                        conditions: unknown[];
                        /** @description Subscribers matching now (live), whatever their status */
                        subscriberCount: number;
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No segment with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed: an unknown field or op, an op that does not apply to the field, or a value of the wrong type, named by its path */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listSegmentSubscribers: {
        parameters: {
            query: {
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "sub_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10",
                     *           "email": "ada@example.com",
                     *           "name": "Ada Lovelace",
                     *           "status": "active",
                     *           "attributes": {
                     *             "plan": "pro",
                     *             "signupSource": "webinar"
                     *           },
                     *           "lists": [
                     *             "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *           ],
                     *           "createdAt": "2026-11-20T10:15:30.123Z",
                     *           "updatedAt": "2026-11-20T10:15:30.123Z"
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** @description sub_…; time-ordered, never reused */
                            id: string;
                            email: string;
                            name: string | null;
                            /** @description active; unconfirmed (double opt-in pending); unsubscribed, bounced, complained (also imposed by a suppression) */
                            status: "active" | "unconfirmed" | "unsubscribed" | "bounced" | "complained";
                            /** @description Free-form JSON object of custom fields (merge fields, segment conditions) */
                            attributes: {
                                [key: string]: unknown;
                            };
                            /** @description Ids of the lists the subscriber is in */
                            lists: string[];
                            /** Format: date-time */
                            createdAt: string;
                            /** Format: date-time */
                            updatedAt: string;
                            /** @description Present (true) when a test key made the request: nothing was stored */
                            sandbox?: boolean;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No segment with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listCampaigns: {
        parameters: {
            query: {
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
                /** @description draft → scheduled → sending → sent; sending ⇄ paused; draft, scheduled, sending, paused → cancelled */
                status?: "draft" | "scheduled" | "sending" | "paused" | "sent" | "cancelled";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "cmp_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *           "name": "November newsletter",
                     *           "subject": "What is new in November, {{ subscriber.name | friend }}",
                     *           "from": {
                     *             "email": "news@acme.com",
                     *             "name": "Acme"
                     *           },
                     *           "html": null,
                     *           "audience": {
                     *             "lists": [
                     *               "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *             ],
                     *             "segment": null,
                     *             "excludeLists": [
                     *               "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c02"
                     *             ]
                     *           },
                     *           "tags": [
                     *             "newsletter"
                     *           ],
                     *           "throttle": 6000,
                     *           "status": "draft",
                     *           "replyTo": null,
                     *           "text": null,
                     *           "templateId": null,
                     *           "variables": {},
                     *           "headers": {},
                     *           "scheduledAt": null,
                     *           "strict": false,
                     *           "pauseReason": null,
                     *           "createdAt": "2026-11-20T10:15:30.123Z",
                     *           "updatedAt": "2026-11-20T10:15:30.123Z"
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** @description cmp_… */
                            id: string;
                            name: string;
                            /** @description draft → scheduled → sending → sent; sending ⇄ paused; draft, scheduled, sending, paused → cancelled */
                            status: "draft" | "scheduled" | "sending" | "paused" | "sent" | "cancelled";
                            subject: string | null;
                            from: {
                                email: string;
                                name: string | null;
                            };
                            replyTo: string | null;
                            html: string | null;
                            text: string | null;
                            templateId: string | null;
                            variables: {
                                [key: string]: unknown;
                            };
                            audience: {
                                lists: string[];
                                segment: string | null;
                                excludeLists: string[];
                            };
                            tags: string[];
                            headers: {
                                [key: string]: string;
                            };
                            scheduledAt: string | null;
                            throttle: number | null;
                            /** @description The send refuses placeholders that render empty for the audience */
                            strict: boolean;
                            pauseReason: string | null;
                            /** Format: date-time */
                            createdAt: string;
                            /** Format: date-time */
                            updatedAt: string;
                            /** @description Present (true) when a test key made the request: nothing was stored */
                            sandbox?: boolean;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createCampaign: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "November newsletter",
                 *       "subject": "What is new in November, {{ subscriber.name | friend }}",
                 *       "from": {
                 *         "email": "news@acme.com",
                 *         "name": "Acme"
                 *       },
                 *       "html": "<p>Hi {{ subscriber.name | there }}, you are on the {{ subscriber.attributes.plan | free }} plan.</p><p><a href=\"https://acme.com/blog\">Read the blog</a></p>",
                 *       "audience": {
                 *         "lists": [
                 *           "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                 *         ],
                 *         "excludeLists": [
                 *           "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c02"
                 *         ]
                 *       },
                 *       "tags": [
                 *         "newsletter"
                 *       ],
                 *       "throttle": 6000
                 *     }
                 */
                "application/json": {
                    name: string;
                    /** @description May contain {{ merge fields }}; at most 998 bytes once rendered */
                    subject?: string;
                    from: {
                        /** @description A bare address: name@example.com */
                        email: string;
                        name?: string;
                    };
                    replyTo?: string | null;
                    /** @description HTML body (template language); stored once, rendered per recipient at delivery */
                    html?: string | null;
                    /** @description Plain-text body; made from html when absent */
                    text?: string | null;
                    /** @description A template supplying the parts the campaign leaves out; copied in when the campaign is sent */
                    templateId?: string | null;
                    /** @description Defaults for merge fields; `subscriber.*` and `unsubscribe_url` are set per recipient */
                    variables?: {
                        [key: string]: unknown;
                    };
                    audience: {
                        /** @description Active subscribers of these lists (one message per address) */
                        lists: string[];
                        /** @description Only subscribers matching this segment */
                        segment?: string | null;
                        /** @description Minus subscribers of these lists */
                        excludeLists?: string[];
                    };
                    tags?: string[];
                    headers?: {
                        [key: string]: string;
                    };
                    /** @description Send starts at this time (up to 365 days ahead) once the campaign is sent */
                    scheduledAt?: string | null;
                    /** @description At most this many messages per minute */
                    throttle?: number;
                    /**
                     * @description Refuse the send (422 `template_error` naming each placeholder) when a placeholder has no value and no fallback for the audience, instead of only warning on save
                     * @default false
                     */
                    strict?: boolean;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "cmp_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *       "name": "November newsletter",
                     *       "subject": "What is new in November, {{ subscriber.name | friend }}",
                     *       "from": {
                     *         "email": "news@acme.com",
                     *         "name": "Acme"
                     *       },
                     *       "html": "<p>Hi {{ subscriber.name | there }}, you are on the {{ subscriber.attributes.plan | free }} plan.</p><p><a href=\"https://acme.com/blog\">Read the blog</a></p>",
                     *       "audience": {
                     *         "lists": [
                     *           "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *         ],
                     *         "segment": null,
                     *         "excludeLists": [
                     *           "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c02"
                     *         ]
                     *       },
                     *       "tags": [
                     *         "newsletter"
                     *       ],
                     *       "throttle": 6000,
                     *       "status": "draft",
                     *       "replyTo": null,
                     *       "text": null,
                     *       "templateId": null,
                     *       "variables": {},
                     *       "headers": {},
                     *       "scheduledAt": null,
                     *       "strict": false,
                     *       "pauseReason": null,
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-20T10:15:30.123Z",
                     *       "warnings": []
                     *     }
                     */
                    "application/json": {
                        /** @description cmp_… */
                        id: string;
                        name: string;
                        /** @description draft → scheduled → sending → sent; sending ⇄ paused; draft, scheduled, sending, paused → cancelled */
                        status: "draft" | "scheduled" | "sending" | "paused" | "sent" | "cancelled";
                        subject: string | null;
                        from: {
                            email: string;
                            name: string | null;
                        };
                        replyTo: string | null;
                        html: string | null;
                        text: string | null;
                        templateId: string | null;
                        variables: {
                            [key: string]: unknown;
                        };
                        audience: {
                            lists: string[];
                            segment: string | null;
                            excludeLists: string[];
                        };
                        tags: string[];
                        headers: {
                            [key: string]: string;
                        };
                        scheduledAt: string | null;
                        throttle: number | null;
                        /** @description The send refuses placeholders that render empty for the audience */
                        strict: boolean;
                        pauseReason: string | null;
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        /** @description Placeholders that will render empty or the fallback: unknown subscriber fields, attributes no recipient has, values missing at send time. Empty when all is well. */
                        warnings: {
                            /** @description The placeholder's path, e.g. subscriber.nmae */
                            field: string;
                            /** @description What is wrong with it, in a sentence */
                            message: string;
                        }[];
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed (per-field errors), sender_domain_unverified or template_error */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getCampaign: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "cmp_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *       "name": "November newsletter",
                     *       "subject": "What is new in November, {{ subscriber.name | friend }}",
                     *       "from": {
                     *         "email": "news@acme.com",
                     *         "name": "Acme"
                     *       },
                     *       "html": "<p>Hi {{ subscriber.name | there }}, you are on the {{ subscriber.attributes.plan | free }} plan.</p><p><a href=\"https://acme.com/blog\">Read the blog</a></p>",
                     *       "audience": {
                     *         "lists": [
                     *           "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *         ],
                     *         "segment": null,
                     *         "excludeLists": [
                     *           "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c02"
                     *         ]
                     *       },
                     *       "tags": [
                     *         "newsletter"
                     *       ],
                     *       "throttle": 6000,
                     *       "status": "sending",
                     *       "replyTo": null,
                     *       "text": null,
                     *       "templateId": null,
                     *       "variables": {},
                     *       "headers": {},
                     *       "scheduledAt": null,
                     *       "strict": false,
                     *       "pauseReason": null,
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-20T10:15:30.123Z",
                     *       "progress": {
                     *         "recipients": 1200,
                     *         "queued": 1200,
                     *         "remaining": 3,
                     *         "percent": 99.8,
                     *         "startedAt": "2026-11-20T10:16:00.000Z",
                     *         "finishedAt": null,
                     *         "etaSeconds": 2
                     *       },
                     *       "counts": {
                     *         "sent": 1200,
                     *         "delivered": 1188,
                     *         "deferred": 9,
                     *         "hardBounced": 8,
                     *         "softBounced": 1,
                     *         "complaints": 0,
                     *         "unsubscribes": 3,
                     *         "opens": 702,
                     *         "uniqueOpens": 512,
                     *         "machineOpens": 140,
                     *         "clicks": 190,
                     *         "uniqueClicks": 131,
                     *         "cancelled": 0,
                     *         "skipped": {
                     *           "suppressed": 4,
                     *           "unsubscribed": 10,
                     *           "bounced": 2,
                     *           "complained": 0,
                     *           "duplicate": 31
                     *         }
                     *       },
                     *       "rates": {
                     *         "delivery": 0.99,
                     *         "open": 0.431,
                     *         "click": 0.1103,
                     *         "clickToOpen": 0.2559,
                     *         "bounce": 0.0075,
                     *         "complaint": 0,
                     *         "unsubscribe": 0.0025
                     *       },
                     *       "topLinks": [
                     *         {
                     *           "url": "https://acme.com/blog",
                     *           "clicks": 190,
                     *           "uniqueClicks": 131
                     *         }
                     *       ],
                     *       "timeline": [
                     *         {
                     *           "hour": "2026-11-20T10:00:00.000Z",
                     *           "delivered": 1188,
                     *           "opens": 702,
                     *           "clicks": 190,
                     *           "bounces": 9
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        /** @description cmp_… */
                        id: string;
                        name: string;
                        /** @description draft → scheduled → sending → sent; sending ⇄ paused; draft, scheduled, sending, paused → cancelled */
                        status: "draft" | "scheduled" | "sending" | "paused" | "sent" | "cancelled";
                        subject: string | null;
                        from: {
                            email: string;
                            name: string | null;
                        };
                        replyTo: string | null;
                        html: string | null;
                        text: string | null;
                        templateId: string | null;
                        variables: {
                            [key: string]: unknown;
                        };
                        audience: {
                            lists: string[];
                            segment: string | null;
                            excludeLists: string[];
                        };
                        tags: string[];
                        headers: {
                            [key: string]: string;
                        };
                        scheduledAt: string | null;
                        throttle: number | null;
                        /** @description The send refuses placeholders that render empty for the audience */
                        strict: boolean;
                        pauseReason: string | null;
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        progress: {
                            /** @description Messages the campaign sends: counted when the campaign is sent, exact once the fan-out ends */
                            recipients: number;
                            /** @description Messages written so far */
                            queued: number;
                            /** @description Recipients not yet delivered, bounced or cancelled */
                            remaining: number;
                            percent: number;
                            startedAt: string | null;
                            finishedAt: string | null;
                            /** @description At the rate so far; null when not sending */
                            etaSeconds: number | null;
                        };
                        counts: {
                            /** @description Messages queued for delivery (`sent` events) */
                            sent: number;
                            delivered: number;
                            /** @description Deferral events (temporary failures; retried) */
                            deferred: number;
                            hardBounced: number;
                            softBounced: number;
                            complaints: number;
                            unsubscribes: number;
                            opens: number;
                            /** @description Messages opened at least once */
                            uniqueOpens: number;
                            /** @description Opens by mail privacy proxies (e.g. Apple Mail Privacy Protection) */
                            machineOpens: number;
                            clicks: number;
                            /** @description Messages with at least one click */
                            uniqueClicks: number;
                        } & {
                            /** @description Unsent messages removed by cancel */
                            cancelled: number;
                            /** @description Audience members who got no message, by reason; duplicate = extra list memberships of one address */
                            skipped: {
                                suppressed: number;
                                unsubscribed: number;
                                bounced: number;
                                complained: number;
                                duplicate: number;
                            };
                        };
                        /** @description Fractions 0–1, 4 decimals; 0 when the denominator is 0 */
                        rates: {
                            /** @description delivered / sent */
                            delivery: number;
                            /** @description uniqueOpens / delivered */
                            open: number;
                            /** @description uniqueClicks / delivered */
                            click: number;
                            /** @description uniqueClicks / uniqueOpens */
                            clickToOpen: number;
                            /** @description (hardBounced + softBounced) / sent */
                            bounce: number;
                            /** @description complaints / delivered */
                            complaint: number;
                            /** @description unsubscribes / delivered */
                            unsubscribe: number;
                        };
                        /** @description The 10 most clicked links */
                        topLinks: {
                            url: string;
                            clicks: number;
                            uniqueClicks: number;
                        }[];
                        /** @description Hourly buckets (UTC) with activity, oldest first */
                        timeline: {
                            /** Format: date-time */
                            hour: string;
                            delivered: number;
                            opens: number;
                            clicks: number;
                            bounces: number;
                        }[];
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No campaign with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteCampaign: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No campaign with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description invalid_state: the campaign is in a state that does not allow this; `state` names it */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    updateCampaign: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "subject": "Our November news",
                 *       "scheduledAt": "2026-11-25T09:00:00.000Z"
                 *     }
                 */
                "application/json": {
                    name?: string;
                    /** @description May contain {{ merge fields }}; at most 998 bytes once rendered */
                    subject?: string;
                    from?: {
                        /** @description A bare address: name@example.com */
                        email: string;
                        name?: string;
                    };
                    replyTo?: string | null;
                    /** @description HTML body (template language); stored once, rendered per recipient at delivery */
                    html?: string | null;
                    /** @description Plain-text body; made from html when absent */
                    text?: string | null;
                    /** @description A template supplying the parts the campaign leaves out; copied in when the campaign is sent */
                    templateId?: string | null;
                    /** @description Defaults for merge fields; `subscriber.*` and `unsubscribe_url` are set per recipient */
                    variables?: {
                        [key: string]: unknown;
                    };
                    audience?: {
                        /** @description Active subscribers of these lists (one message per address) */
                        lists: string[];
                        /** @description Only subscribers matching this segment */
                        segment?: string | null;
                        /** @description Minus subscribers of these lists */
                        excludeLists?: string[];
                    };
                    tags?: string[];
                    headers?: {
                        [key: string]: string;
                    };
                    /** @description Send starts at this time (up to 365 days ahead) once the campaign is sent */
                    scheduledAt?: string | null;
                    /** @description Messages per minute; null removes the throttle */
                    throttle?: number | null;
                    /** @description Refuse the send (422 `template_error` naming each placeholder) when a placeholder has no value and no fallback for the audience, instead of only warning on save */
                    strict?: boolean;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "cmp_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *       "name": "November newsletter",
                     *       "subject": "What is new in November, {{ subscriber.name | friend }}",
                     *       "from": {
                     *         "email": "news@acme.com",
                     *         "name": "Acme"
                     *       },
                     *       "html": "<p>Hi {{ subscriber.name | there }}, you are on the {{ subscriber.attributes.plan | free }} plan.</p><p><a href=\"https://acme.com/blog\">Read the blog</a></p>",
                     *       "audience": {
                     *         "lists": [
                     *           "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *         ],
                     *         "segment": null,
                     *         "excludeLists": [
                     *           "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c02"
                     *         ]
                     *       },
                     *       "tags": [
                     *         "newsletter"
                     *       ],
                     *       "throttle": 6000,
                     *       "status": "draft",
                     *       "replyTo": null,
                     *       "text": null,
                     *       "templateId": null,
                     *       "variables": {},
                     *       "headers": {},
                     *       "scheduledAt": null,
                     *       "strict": false,
                     *       "pauseReason": null,
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-20T10:15:30.123Z",
                     *       "warnings": []
                     *     }
                     */
                    "application/json": {
                        /** @description cmp_… */
                        id: string;
                        name: string;
                        /** @description draft → scheduled → sending → sent; sending ⇄ paused; draft, scheduled, sending, paused → cancelled */
                        status: "draft" | "scheduled" | "sending" | "paused" | "sent" | "cancelled";
                        subject: string | null;
                        from: {
                            email: string;
                            name: string | null;
                        };
                        replyTo: string | null;
                        html: string | null;
                        text: string | null;
                        templateId: string | null;
                        variables: {
                            [key: string]: unknown;
                        };
                        audience: {
                            lists: string[];
                            segment: string | null;
                            excludeLists: string[];
                        };
                        tags: string[];
                        headers: {
                            [key: string]: string;
                        };
                        scheduledAt: string | null;
                        throttle: number | null;
                        /** @description The send refuses placeholders that render empty for the audience */
                        strict: boolean;
                        pauseReason: string | null;
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        /** @description Placeholders that will render empty or the fallback: unknown subscriber fields, attributes no recipient has, values missing at send time. Empty when all is well. */
                        warnings: {
                            /** @description The placeholder's path, e.g. subscriber.nmae */
                            field: string;
                            /** @description What is wrong with it, in a sentence */
                            message: string;
                        }[];
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No campaign with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description invalid_state: the campaign is in a state that does not allow this; `state` names it */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed (per-field errors), sender_domain_unverified or template_error */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    sendCampaign: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "cmp_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *       "status": "sending"
                     *     }
                     */
                    "application/json": {
                        id: string;
                        /** @description draft → scheduled → sending → sent; sending ⇄ paused; draft, scheduled, sending, paused → cancelled */
                        status: "draft" | "scheduled" | "sending" | "paused" | "sent" | "cancelled";
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No campaign with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description invalid_state (wrong state) or account_at_risk (sending health at_risk and not acknowledged: POST /api/v1/stats/health/acknowledge) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed (per-field errors), sender_domain_unverified or template_error */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    pauseCampaign: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "cmp_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *       "status": "paused"
                     *     }
                     */
                    "application/json": {
                        id: string;
                        /** @description draft → scheduled → sending → sent; sending ⇄ paused; draft, scheduled, sending, paused → cancelled */
                        status: "draft" | "scheduled" | "sending" | "paused" | "sent" | "cancelled";
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No campaign with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description invalid_state: the campaign is in a state that does not allow this; `state` names it */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    resumeCampaign: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "cmp_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *       "status": "sending"
                     *     }
                     */
                    "application/json": {
                        id: string;
                        /** @description draft → scheduled → sending → sent; sending ⇄ paused; draft, scheduled, sending, paused → cancelled */
                        status: "draft" | "scheduled" | "sending" | "paused" | "sent" | "cancelled";
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No campaign with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description invalid_state (wrong state) or account_at_risk (sending health at_risk and not acknowledged: POST /api/v1/stats/health/acknowledge) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    cancelCampaign: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "cmp_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20",
                     *       "status": "cancelled"
                     *     }
                     */
                    "application/json": {
                        id: string;
                        /** @description draft → scheduled → sending → sent; sending ⇄ paused; draft, scheduled, sending, paused → cancelled */
                        status: "draft" | "scheduled" | "sending" | "paused" | "sent" | "cancelled";
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No campaign with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description invalid_state: the campaign is in a state that does not allow this; `state` names it */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    sendCampaignTest: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "to": [
                 *         "me@acme.com"
                 *       ]
                 *     }
                 */
                "application/json": {
                    to: string[];
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "sample": {
                     *         "id": "sub_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10",
                     *         "email": "ada@example.com"
                     *       },
                     *       "data": [
                     *         {
                     *           "id": "msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c40",
                     *           "status": "queued",
                     *           "to": "me@acme.com",
                     *           "subject": "[Test] What is new in November, Ada",
                     *           "sandbox": false
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        sample: {
                            id: string;
                            email: string;
                        };
                        /** @description Per address: the send result, or `{to, error: <problem>}` */
                        data: {
                            [key: string]: unknown;
                        }[];
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No campaign with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    previewCampaign: {
        parameters: {
            query?: {
                /** @description Render for this subscriber (id or address) */
                subscriberId?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "subscriber": {
                     *         "id": "sub_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10",
                     *         "email": "ada@example.com",
                     *         "name": "Ada"
                     *       },
                     *       "subject": "What is new in November, Ada",
                     *       "html": "<p>Hi Ada, you are on the pro plan.</p>",
                     *       "text": null,
                     *       "audience": {
                     *         "recipients": 1204,
                     *         "subscribers": 1250
                     *       },
                     *       "warnings": []
                     *     }
                     */
                    "application/json": {
                        subscriber: {
                            id: string;
                            email: string;
                            name: string | null;
                        };
                        subject: string;
                        html: string | null;
                        text: string | null;
                        audience: {
                            /** @description Active, not suppressed, counted once: who a send now reaches */
                            recipients: number;
                            /** @description Every confirmed member of the audience, whatever their status */
                            subscribers: number;
                        };
                        /** @description Placeholders that will render empty or the fallback: unknown subscriber fields, attributes no recipient has, values missing at send time. Empty when all is well. */
                        warnings: {
                            /** @description The placeholder's path, e.g. subscriber.nmae */
                            field: string;
                            /** @description What is wrong with it, in a sentence */
                            message: string;
                        }[];
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No campaign with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed (per-field errors), sender_domain_unverified or template_error */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listCampaignRecipients: {
        parameters: {
            query: {
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
                status?: "queued" | "sending" | "delivered" | "deferred" | "bounced" | "failed" | "held";
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "subscriberId": "sub_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10",
                     *           "messageId": "msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c30",
                     *           "email": "ada@example.com",
                     *           "status": "delivered",
                     *           "attempts": 1,
                     *           "lastResponse": "250 2.0.0 OK",
                     *           "deliveredAt": "2026-11-20T10:16:02.120Z",
                     *           "openedAt": "2026-11-20T10:20:41.003Z",
                     *           "clickedAt": null,
                     *           "queuedAt": "2026-11-20T10:16:00.412Z"
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            subscriberId: string;
                            messageId: string;
                            email: string;
                            /** @description queued, sending, delivered, deferred, bounced, failed, held (campaign paused) */
                            status: string;
                            attempts: number;
                            lastResponse: string | null;
                            deliveredAt: string | null;
                            openedAt: string | null;
                            clickedAt: string | null;
                            /** Format: date-time */
                            queuedAt: string;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No campaign with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getStats: {
        parameters: {
            query?: {
                /** @description ISO 8601 date or date-time; its UTC day is the first of the range */
                from?: string;
                /** @description ISO 8601 date or date-time (default now); its UTC day is the last */
                to?: string;
                tag?: string;
                campaignId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "from": "2026-10-25",
                     *       "to": "2026-11-23",
                     *       "filter": {
                     *         "tag": null,
                     *         "campaignId": null
                     *       },
                     *       "counts": {
                     *         "sent": 1200,
                     *         "delivered": 1188,
                     *         "deferred": 9,
                     *         "hardBounced": 8,
                     *         "softBounced": 1,
                     *         "complaints": 0,
                     *         "unsubscribes": 3,
                     *         "opens": 702,
                     *         "uniqueOpens": 512,
                     *         "machineOpens": 140,
                     *         "clicks": 190,
                     *         "uniqueClicks": 131
                     *       },
                     *       "rates": {
                     *         "delivery": 0.99,
                     *         "open": 0.431,
                     *         "click": 0.1103,
                     *         "clickToOpen": 0.2559,
                     *         "bounce": 0.0075,
                     *         "complaint": 0,
                     *         "unsubscribe": 0.0025
                     *       },
                     *       "quota": {
                     *         "used": 18250,
                     *         "limit": 50000,
                     *         "resetsAt": "2026-12-01T00:00:00.000Z"
                     *       },
                     *       "daily": [
                     *         {
                     *           "date": "2026-10-25",
                     *           "sent": 1200,
                     *           "delivered": 1188,
                     *           "deferred": 9,
                     *           "hardBounced": 8,
                     *           "softBounced": 1,
                     *           "complaints": 0,
                     *           "unsubscribes": 3,
                     *           "opens": 702,
                     *           "uniqueOpens": 512,
                     *           "machineOpens": 140,
                     *           "clicks": 190,
                     *           "uniqueClicks": 131
                     *         }
                     *       ],
                     *       "health": {
                     *         "status": "warning",
                     *         "bounceRate": 0.061,
                     *         "complaintRate": 0.0004,
                     *         "senderSideRate": 0.003,
                     *         "sent": 5210,
                     *         "windowDays": 7,
                     *         "thresholds": {
                     *           "windowDays": 7,
                     *           "minSent": 100,
                     *           "bounce": {
                     *             "warning": 0.05,
                     *             "atRisk": 0.1
                     *           },
                     *           "complaint": {
                     *             "warning": 0.001,
                     *             "atRisk": 0.005
                     *           },
                     *           "senderSide": {
                     *             "warning": 0.02,
                     *             "atRisk": 0.05
                     *           }
                     *         },
                     *         "atRiskSince": null,
                     *         "acknowledgedAt": null,
                     *         "sendingBlocked": false
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * Format: date
                         * @description First UTC day (inclusive)
                         */
                        from: string;
                        /**
                         * Format: date
                         * @description Last UTC day (inclusive)
                         */
                        to: string;
                        filter: {
                            tag: string | null;
                            campaignId: string | null;
                        };
                        counts: {
                            /** @description Messages queued for delivery (`sent` events) */
                            sent: number;
                            delivered: number;
                            /** @description Deferral events (temporary failures; retried) */
                            deferred: number;
                            hardBounced: number;
                            softBounced: number;
                            complaints: number;
                            unsubscribes: number;
                            opens: number;
                            /** @description Messages opened at least once */
                            uniqueOpens: number;
                            /** @description Opens by mail privacy proxies (e.g. Apple Mail Privacy Protection) */
                            machineOpens: number;
                            clicks: number;
                            /** @description Messages with at least one click */
                            uniqueClicks: number;
                        };
                        /** @description Fractions 0–1, 4 decimals; 0 when the denominator is 0 */
                        rates: {
                            /** @description delivered / sent */
                            delivery: number;
                            /** @description uniqueOpens / delivered */
                            open: number;
                            /** @description uniqueClicks / delivered */
                            click: number;
                            /** @description uniqueClicks / uniqueOpens */
                            clickToOpen: number;
                            /** @description (hardBounced + softBounced) / sent */
                            bounce: number;
                            /** @description complaints / delivered */
                            complaint: number;
                            /** @description unsubscribes / delivered */
                            unsubscribe: number;
                        };
                        quota: {
                            /** @description Messages accepted this calendar month (UTC) */
                            used: number;
                            /** @description Monthly quota; null = unlimited */
                            limit: number | null;
                            /** Format: date-time */
                            resetsAt: string;
                        };
                        /** @description One entry per day of the range, zeros included */
                        daily: ({
                            /** Format: date */
                            date: string;
                        } & {
                            /** @description Messages queued for delivery (`sent` events) */
                            sent: number;
                            delivered: number;
                            /** @description Deferral events (temporary failures; retried) */
                            deferred: number;
                            hardBounced: number;
                            softBounced: number;
                            complaints: number;
                            unsubscribes: number;
                            opens: number;
                            /** @description Messages opened at least once */
                            uniqueOpens: number;
                            /** @description Opens by mail privacy proxies (e.g. Apple Mail Privacy Protection) */
                            machineOpens: number;
                            clicks: number;
                            /** @description Messages with at least one click */
                            uniqueClicks: number;
                        })[];
                        health: {
                            status: "ok" | "warning" | "at_risk";
                            /** @description hardBounced / sent over the window */
                            bounceRate: number;
                            /** @description complaints / delivered over the window */
                            complaintRate: number;
                            /** @description sender-side bounces / sent over the window (by reason: GET /api/v1/account/health) */
                            senderSideRate: number;
                            /** @description Messages sent in the window; below thresholds.minSent the status is ok */
                            sent: number;
                            windowDays: number;
                            thresholds: {
                                windowDays: number;
                                minSent: number;
                                bounce: {
                                    warning: number;
                                    atRisk: number;
                                };
                                complaint: {
                                    warning: number;
                                    atRisk: number;
                                };
                                senderSide: {
                                    warning: number;
                                    atRisk: number;
                                };
                            };
                            atRiskSince: string | null;
                            acknowledgedAt: string | null;
                            /** @description at_risk and not acknowledged: campaign send/resume answer 409 account_at_risk */
                            sendingBlocked: boolean;
                            /** @description Present (true) when a test key made the request: nothing was stored */
                            sandbox?: boolean;
                        };
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed: a bad date, a range over 366 days, an unknown campaign, tag and campaignId together */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    acknowledgeHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "at_risk",
                     *       "bounceRate": 0.12,
                     *       "complaintRate": 0.0004,
                     *       "senderSideRate": 0.003,
                     *       "sent": 5210,
                     *       "windowDays": 7,
                     *       "thresholds": {
                     *         "windowDays": 7,
                     *         "minSent": 100,
                     *         "bounce": {
                     *           "warning": 0.05,
                     *           "atRisk": 0.1
                     *         },
                     *         "complaint": {
                     *           "warning": 0.001,
                     *           "atRisk": 0.005
                     *         },
                     *         "senderSide": {
                     *           "warning": 0.02,
                     *           "atRisk": 0.05
                     *         }
                     *       },
                     *       "atRiskSince": "2026-11-23T09:00:00.000Z",
                     *       "acknowledgedAt": "2026-11-23T09:30:00.000Z",
                     *       "sendingBlocked": false
                     *     }
                     */
                    "application/json": {
                        status: "ok" | "warning" | "at_risk";
                        /** @description hardBounced / sent over the window */
                        bounceRate: number;
                        /** @description complaints / delivered over the window */
                        complaintRate: number;
                        /** @description sender-side bounces / sent over the window (by reason: GET /api/v1/account/health) */
                        senderSideRate: number;
                        /** @description Messages sent in the window; below thresholds.minSent the status is ok */
                        sent: number;
                        windowDays: number;
                        thresholds: {
                            windowDays: number;
                            minSent: number;
                            bounce: {
                                warning: number;
                                atRisk: number;
                            };
                            complaint: {
                                warning: number;
                                atRisk: number;
                            };
                            senderSide: {
                                warning: number;
                                atRisk: number;
                            };
                        };
                        atRiskSince: string | null;
                        acknowledgedAt: string | null;
                        /** @description at_risk and not acknowledged: campaign send/resume answer 409 account_at_risk */
                        sendingBlocked: boolean;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listAutomations: {
        parameters: {
            query: {
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "aut_019a6f0c3b2e7d1a9c4b5e6f7a8b9c40",
                     *           "name": "Welcome series",
                     *           "status": "active",
                     *           "trigger": {
                     *             "event": "subscriber.created",
                     *             "filter": {
                     *               "match": "all",
                     *               "conditions": [
                     *                 {
                     *                   "field": "list",
                     *                   "op": "eq",
                     *                   "value": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *                 }
                     *               ]
                     *             }
                     *           },
                     *           "steps": [
                     *             {
                     *               "type": "send",
                     *               "templateId": "tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c30",
                     *               "from": {
                     *                 "email": "hello@acme.com",
                     *                 "name": "Acme"
                     *               }
                     *             },
                     *             {
                     *               "type": "wait",
                     *               "duration": "2d"
                     *             },
                     *             {
                     *               "type": "condition",
                     *               "if": {
                     *                 "match": "all",
                     *                 "conditions": [
                     *                   {
                     *                     "field": "opened",
                     *                     "op": "not_exists"
                     *                   }
                     *                 ]
                     *               },
                     *               "then": [
                     *                 {
                     *                   "type": "send",
                     *                   "subject": "Did you see this, {{ subscriber.name | there }}?",
                     *                   "html": "<p>Getting started…</p>",
                     *                   "from": {
                     *                     "email": "hello@acme.com"
                     *                   }
                     *                 }
                     *               ],
                     *               "else": []
                     *             }
                     *           ],
                     *           "reentry": "never",
                     *           "counters": {
                     *             "runsStarted": 120,
                     *             "runsCompleted": 80,
                     *             "runsExited": 2,
                     *             "runsFailed": 0,
                     *             "runsInProgress": 38,
                     *             "sends": [
                     *               {
                     *                 "step": "steps[0]",
                     *                 "sent": 119,
                     *                 "skipped": 1,
                     *                 "delivered": 118,
                     *                 "opened": 70,
                     *                 "clicked": 22
                     *               },
                     *               {
                     *                 "step": "steps[2].then[0]",
                     *                 "sent": 30,
                     *                 "skipped": 0,
                     *                 "delivered": 30,
                     *                 "opened": 9,
                     *                 "clicked": 2
                     *               }
                     *             ]
                     *           },
                     *           "createdAt": "2026-11-20T10:15:30.123Z",
                     *           "updatedAt": "2026-11-20T10:15:30.123Z"
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** @description aut_… */
                            id: string;
                            name: string;
                            /** @description Only active automations start runs; pausing keeps waiting runs waiting */
                            status: "active" | "paused";
                            trigger: {
                                event: string;
                                filter: {
                                    [key: string]: unknown;
                                } | null;
                            };
                            /** @description Steps, in order: {type:"send", templateId | subject + html/text, from, replyTo?}, {type:"wait", duration} or {type:"wait", until:{event, timeout}}, {type:"condition", if, then, else}, {type:"update_subscriber", lists?:{add, remove}, attributes?}, {type:"exit"}. Durations: "30s", "15m", "3h", "2d" (at most 365 days). */
                            steps: unknown[];
                            /** @description Whether an address may start a new run: never (once ever), after_exit (not while a run of it is in progress; default), always */
                            reentry: "never" | "after_exit" | "always";
                            counters: {
                                runsStarted: number;
                                runsCompleted: number;
                                runsExited: number;
                                runsFailed: number;
                                runsInProgress: number;
                                sends: {
                                    /** @description Path of the send step, e.g. steps[2].then[0] */
                                    step: string;
                                    sent: number;
                                    /** @description Not sent: suppressed or unsubscribed address */
                                    skipped: number;
                                    delivered: number;
                                    opened: number;
                                    clicked: number;
                                }[];
                            };
                            /** Format: date-time */
                            createdAt: string;
                            /** Format: date-time */
                            updatedAt: string;
                            /** @description Present (true) when a test key made the request: nothing was stored */
                            sandbox?: boolean;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createAutomation: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Welcome series",
                 *       "trigger": {
                 *         "event": "subscriber.created",
                 *         "filter": {
                 *           "match": "all",
                 *           "conditions": [
                 *             {
                 *               "field": "list",
                 *               "op": "eq",
                 *               "value": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                 *             }
                 *           ]
                 *         }
                 *       },
                 *       "steps": [
                 *         {
                 *           "type": "send",
                 *           "templateId": "tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c30",
                 *           "from": {
                 *             "email": "hello@acme.com",
                 *             "name": "Acme"
                 *           }
                 *         },
                 *         {
                 *           "type": "wait",
                 *           "duration": "2d"
                 *         },
                 *         {
                 *           "type": "condition",
                 *           "if": {
                 *             "match": "all",
                 *             "conditions": [
                 *               {
                 *                 "field": "opened",
                 *                 "op": "not_exists"
                 *               }
                 *             ]
                 *           },
                 *           "then": [
                 *             {
                 *               "type": "send",
                 *               "subject": "Did you see this, {{ subscriber.name | there }}?",
                 *               "html": "<p>Getting started…</p>",
                 *               "from": {
                 *                 "email": "hello@acme.com"
                 *               }
                 *             }
                 *           ],
                 *           "else": []
                 *         }
                 *       ],
                 *       "reentry": "never"
                 *     }
                 */
                "application/json": {
                    name: string;
                    /** @description Only active automations start runs; pausing keeps waiting runs waiting */
                    status?: "active" | "paused";
                    trigger: {
                        /** @description Event name: your own (POST /automations/trigger) or built in: subscriber.created, email.opened, email.clicked, subscriber.unsubscribed */
                        event: string;
                        filter?: {
                            [key: string]: unknown;
                        } | null;
                    };
                    /** @description Steps, in order: {type:"send", templateId | subject + html/text, from, replyTo?}, {type:"wait", duration} or {type:"wait", until:{event, timeout}}, {type:"condition", if, then, else}, {type:"update_subscriber", lists?:{add, remove}, attributes?}, {type:"exit"}. Durations: "30s", "15m", "3h", "2d" (at most 365 days). */
                    steps: unknown[];
                    /** @description Whether an address may start a new run: never (once ever), after_exit (not while a run of it is in progress; default), always */
                    reentry?: "never" | "after_exit" | "always";
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "aut_019a6f0c3b2e7d1a9c4b5e6f7a8b9c40",
                     *       "name": "Welcome series",
                     *       "status": "active",
                     *       "trigger": {
                     *         "event": "subscriber.created",
                     *         "filter": {
                     *           "match": "all",
                     *           "conditions": [
                     *             {
                     *               "field": "list",
                     *               "op": "eq",
                     *               "value": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *             }
                     *           ]
                     *         }
                     *       },
                     *       "steps": [
                     *         {
                     *           "type": "send",
                     *           "templateId": "tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c30",
                     *           "from": {
                     *             "email": "hello@acme.com",
                     *             "name": "Acme"
                     *           }
                     *         },
                     *         {
                     *           "type": "wait",
                     *           "duration": "2d"
                     *         },
                     *         {
                     *           "type": "condition",
                     *           "if": {
                     *             "match": "all",
                     *             "conditions": [
                     *               {
                     *                 "field": "opened",
                     *                 "op": "not_exists"
                     *               }
                     *             ]
                     *           },
                     *           "then": [
                     *             {
                     *               "type": "send",
                     *               "subject": "Did you see this, {{ subscriber.name | there }}?",
                     *               "html": "<p>Getting started…</p>",
                     *               "from": {
                     *                 "email": "hello@acme.com"
                     *               }
                     *             }
                     *           ],
                     *           "else": []
                     *         }
                     *       ],
                     *       "reentry": "never",
                     *       "counters": {
                     *         "runsStarted": 120,
                     *         "runsCompleted": 80,
                     *         "runsExited": 2,
                     *         "runsFailed": 0,
                     *         "runsInProgress": 38,
                     *         "sends": [
                     *           {
                     *             "step": "steps[0]",
                     *             "sent": 119,
                     *             "skipped": 1,
                     *             "delivered": 118,
                     *             "opened": 70,
                     *             "clicked": 22
                     *           },
                     *           {
                     *             "step": "steps[2].then[0]",
                     *             "sent": 30,
                     *             "skipped": 0,
                     *             "delivered": 30,
                     *             "opened": 9,
                     *             "clicked": 2
                     *           }
                     *         ]
                     *       },
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-20T10:15:30.123Z",
                     *       "warnings": []
                     *     }
                     */
                    "application/json": {
                        /** @description aut_… */
                        id: string;
                        name: string;
                        /** @description Only active automations start runs; pausing keeps waiting runs waiting */
                        status: "active" | "paused";
                        trigger: {
                            event: string;
                            filter: {
                                [key: string]: unknown;
                            } | null;
                        };
                        /** @description Steps, in order: {type:"send", templateId | subject + html/text, from, replyTo?}, {type:"wait", duration} or {type:"wait", until:{event, timeout}}, {type:"condition", if, then, else}, {type:"update_subscriber", lists?:{add, remove}, attributes?}, {type:"exit"}. Durations: "30s", "15m", "3h", "2d" (at most 365 days). */
                        steps: unknown[];
                        /** @description Whether an address may start a new run: never (once ever), after_exit (not while a run of it is in progress; default), always */
                        reentry: "never" | "after_exit" | "always";
                        counters: {
                            runsStarted: number;
                            runsCompleted: number;
                            runsExited: number;
                            runsFailed: number;
                            runsInProgress: number;
                            sends: {
                                /** @description Path of the send step, e.g. steps[2].then[0] */
                                step: string;
                                sent: number;
                                /** @description Not sent: suppressed or unsubscribed address */
                                skipped: number;
                                delivered: number;
                                opened: number;
                                clicked: number;
                            }[];
                        };
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                        /** @description Placeholders that will render empty or the fallback: unknown subscriber fields, attributes no recipient has, values missing at send time. Empty when all is well. */
                        warnings: {
                            /** @description The placeholder's path, e.g. subscriber.nmae */
                            field: string;
                            /** @description What is wrong with it, in a sentence */
                            message: string;
                        }[];
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed: a bad step, duration, rule, or a template, list or sender that does not exist, named by its path */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getAutomation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "aut_019a6f0c3b2e7d1a9c4b5e6f7a8b9c40",
                     *       "name": "Welcome series",
                     *       "status": "active",
                     *       "trigger": {
                     *         "event": "subscriber.created",
                     *         "filter": {
                     *           "match": "all",
                     *           "conditions": [
                     *             {
                     *               "field": "list",
                     *               "op": "eq",
                     *               "value": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *             }
                     *           ]
                     *         }
                     *       },
                     *       "steps": [
                     *         {
                     *           "type": "send",
                     *           "templateId": "tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c30",
                     *           "from": {
                     *             "email": "hello@acme.com",
                     *             "name": "Acme"
                     *           }
                     *         },
                     *         {
                     *           "type": "wait",
                     *           "duration": "2d"
                     *         },
                     *         {
                     *           "type": "condition",
                     *           "if": {
                     *             "match": "all",
                     *             "conditions": [
                     *               {
                     *                 "field": "opened",
                     *                 "op": "not_exists"
                     *               }
                     *             ]
                     *           },
                     *           "then": [
                     *             {
                     *               "type": "send",
                     *               "subject": "Did you see this, {{ subscriber.name | there }}?",
                     *               "html": "<p>Getting started…</p>",
                     *               "from": {
                     *                 "email": "hello@acme.com"
                     *               }
                     *             }
                     *           ],
                     *           "else": []
                     *         }
                     *       ],
                     *       "reentry": "never",
                     *       "counters": {
                     *         "runsStarted": 120,
                     *         "runsCompleted": 80,
                     *         "runsExited": 2,
                     *         "runsFailed": 0,
                     *         "runsInProgress": 38,
                     *         "sends": [
                     *           {
                     *             "step": "steps[0]",
                     *             "sent": 119,
                     *             "skipped": 1,
                     *             "delivered": 118,
                     *             "opened": 70,
                     *             "clicked": 22
                     *           },
                     *           {
                     *             "step": "steps[2].then[0]",
                     *             "sent": 30,
                     *             "skipped": 0,
                     *             "delivered": 30,
                     *             "opened": 9,
                     *             "clicked": 2
                     *           }
                     *         ]
                     *       },
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-20T10:15:30.123Z"
                     *     }
                     */
                    "application/json": {
                        /** @description aut_… */
                        id: string;
                        name: string;
                        /** @description Only active automations start runs; pausing keeps waiting runs waiting */
                        status: "active" | "paused";
                        trigger: {
                            event: string;
                            filter: {
                                [key: string]: unknown;
                            } | null;
                        };
                        /** @description Steps, in order: {type:"send", templateId | subject + html/text, from, replyTo?}, {type:"wait", duration} or {type:"wait", until:{event, timeout}}, {type:"condition", if, then, else}, {type:"update_subscriber", lists?:{add, remove}, attributes?}, {type:"exit"}. Durations: "30s", "15m", "3h", "2d" (at most 365 days). */
                        steps: unknown[];
                        /** @description Whether an address may start a new run: never (once ever), after_exit (not while a run of it is in progress; default), always */
                        reentry: "never" | "after_exit" | "always";
                        counters: {
                            runsStarted: number;
                            runsCompleted: number;
                            runsExited: number;
                            runsFailed: number;
                            runsInProgress: number;
                            sends: {
                                /** @description Path of the send step, e.g. steps[2].then[0] */
                                step: string;
                                sent: number;
                                /** @description Not sent: suppressed or unsubscribed address */
                                skipped: number;
                                delivered: number;
                                opened: number;
                                clicked: number;
                            }[];
                        };
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No automation with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteAutomation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No automation with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    updateAutomation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "status": "paused"
                 *     }
                 */
                "application/json": {
                    name?: string;
                    /** @description Only active automations start runs; pausing keeps waiting runs waiting */
                    status?: "active" | "paused";
                    trigger?: {
                        /** @description Event name: your own (POST /automations/trigger) or built in: subscriber.created, email.opened, email.clicked, subscriber.unsubscribed */
                        event: string;
                        filter?: {
                            [key: string]: unknown;
                        } | null;
                    };
                    /** @description Steps, in order: {type:"send", templateId | subject + html/text, from, replyTo?}, {type:"wait", duration} or {type:"wait", until:{event, timeout}}, {type:"condition", if, then, else}, {type:"update_subscriber", lists?:{add, remove}, attributes?}, {type:"exit"}. Durations: "30s", "15m", "3h", "2d" (at most 365 days). */
                    steps?: unknown[];
                    /** @description Whether an address may start a new run: never (once ever), after_exit (not while a run of it is in progress; default), always */
                    reentry?: "never" | "after_exit" | "always";
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "aut_019a6f0c3b2e7d1a9c4b5e6f7a8b9c40",
                     *       "name": "Welcome series",
                     *       "status": "active",
                     *       "trigger": {
                     *         "event": "subscriber.created",
                     *         "filter": {
                     *           "match": "all",
                     *           "conditions": [
                     *             {
                     *               "field": "list",
                     *               "op": "eq",
                     *               "value": "lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01"
                     *             }
                     *           ]
                     *         }
                     *       },
                     *       "steps": [
                     *         {
                     *           "type": "send",
                     *           "templateId": "tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c30",
                     *           "from": {
                     *             "email": "hello@acme.com",
                     *             "name": "Acme"
                     *           }
                     *         },
                     *         {
                     *           "type": "wait",
                     *           "duration": "2d"
                     *         },
                     *         {
                     *           "type": "condition",
                     *           "if": {
                     *             "match": "all",
                     *             "conditions": [
                     *               {
                     *                 "field": "opened",
                     *                 "op": "not_exists"
                     *               }
                     *             ]
                     *           },
                     *           "then": [
                     *             {
                     *               "type": "send",
                     *               "subject": "Did you see this, {{ subscriber.name | there }}?",
                     *               "html": "<p>Getting started…</p>",
                     *               "from": {
                     *                 "email": "hello@acme.com"
                     *               }
                     *             }
                     *           ],
                     *           "else": []
                     *         }
                     *       ],
                     *       "reentry": "never",
                     *       "counters": {
                     *         "runsStarted": 120,
                     *         "runsCompleted": 80,
                     *         "runsExited": 2,
                     *         "runsFailed": 0,
                     *         "runsInProgress": 38,
                     *         "sends": [
                     *           {
                     *             "step": "steps[0]",
                     *             "sent": 119,
                     *             "skipped": 1,
                     *             "delivered": 118,
                     *             "opened": 70,
                     *             "clicked": 22
                     *           },
                     *           {
                     *             "step": "steps[2].then[0]",
                     *             "sent": 30,
                     *             "skipped": 0,
                     *             "delivered": 30,
                     *             "opened": 9,
                     *             "clicked": 2
                     *           }
                     *         ]
                     *       },
                     *       "createdAt": "2026-11-20T10:15:30.123Z",
                     *       "updatedAt": "2026-11-20T10:15:30.123Z",
                     *       "warnings": []
                     *     }
                     */
                    "application/json": {
                        /** @description aut_… */
                        id: string;
                        name: string;
                        /** @description Only active automations start runs; pausing keeps waiting runs waiting */
                        status: "active" | "paused";
                        trigger: {
                            event: string;
                            filter: {
                                [key: string]: unknown;
                            } | null;
                        };
                        /** @description Steps, in order: {type:"send", templateId | subject + html/text, from, replyTo?}, {type:"wait", duration} or {type:"wait", until:{event, timeout}}, {type:"condition", if, then, else}, {type:"update_subscriber", lists?:{add, remove}, attributes?}, {type:"exit"}. Durations: "30s", "15m", "3h", "2d" (at most 365 days). */
                        steps: unknown[];
                        /** @description Whether an address may start a new run: never (once ever), after_exit (not while a run of it is in progress; default), always */
                        reentry: "never" | "after_exit" | "always";
                        counters: {
                            runsStarted: number;
                            runsCompleted: number;
                            runsExited: number;
                            runsFailed: number;
                            runsInProgress: number;
                            sends: {
                                /** @description Path of the send step, e.g. steps[2].then[0] */
                                step: string;
                                sent: number;
                                /** @description Not sent: suppressed or unsubscribed address */
                                skipped: number;
                                delivered: number;
                                opened: number;
                                clicked: number;
                            }[];
                        };
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                        /** @description Placeholders that will render empty or the fallback: unknown subscriber fields, attributes no recipient has, values missing at send time. Empty when all is well. */
                        warnings: {
                            /** @description The placeholder's path, e.g. subscriber.nmae */
                            field: string;
                            /** @description What is wrong with it, in a sentence */
                            message: string;
                        }[];
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No automation with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed: a bad step, duration, rule, or a template, list or sender that does not exist, named by its path */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    triggerAutomations: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "event": "cart.abandoned",
                 *       "email": "ada@example.com",
                 *       "data": {
                 *         "cartUrl": "https://shop.example/cart/42",
                 *         "total": 59.9
                 *       }
                 *     }
                 */
                "application/json": {
                    /** @description Event name; starts the active automations triggered by it and wakes runs waiting for it */
                    event: string;
                    email: string;
                    /** @description Free-form JSON object (at most 32 KB), {{ data.* }} in templates and data.* in rules */
                    data?: {
                        [key: string]: unknown;
                    };
                };
            };
        };
        responses: {
            /** @description Default Response */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "event": "cart.abandoned",
                     *       "email": "ada@example.com",
                     *       "runs": [
                     *         {
                     *           "id": "run_019a6f0c3b2e7d1a9c4b5e6f7a8b9c50",
                     *           "automationId": "aut_019a6f0c3b2e7d1a9c4b5e6f7a8b9c40"
                     *         }
                     *       ],
                     *       "resumed": 0
                     *     }
                     */
                    "application/json": {
                        event: string;
                        email: string;
                        /** @description Runs started (empty when no active automation matched) */
                        runs: {
                            /** @description run_… */
                            id: string;
                            automationId: string;
                        }[];
                        /** @description Runs that were waiting for this event and resume now */
                        resumed: number;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description validation_failed: bad event name, address or data */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listAutomationRuns: {
        parameters: {
            query: {
                /** @description Page size, 1–500 */
                limit: number;
                /** @description desc = newest first */
                order: "asc" | "desc";
                /** @description nextCursor of the previous page */
                cursor?: string;
                /** @description active (steps to perform now), waiting, completed, exited (exit step, unsubscribe, cancel), failed */
                status?: "active" | "waiting" | "completed" | "exited" | "failed";
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "run_019a6f0c3b2e7d1a9c4b5e6f7a8b9c50",
                     *           "automationId": "aut_019a6f0c3b2e7d1a9c4b5e6f7a8b9c40",
                     *           "email": "ada@example.com",
                     *           "data": {
                     *             "cartUrl": "https://shop.example/cart/42"
                     *           },
                     *           "status": "waiting",
                     *           "position": "steps[1]",
                     *           "waitingFor": "purchase",
                     *           "wakesAt": "2026-11-21T10:15:30.123Z",
                     *           "exitReason": null,
                     *           "startedAt": "2026-11-20T10:15:30.123Z",
                     *           "finishedAt": null
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** @description run_… */
                            id: string;
                            automationId: string;
                            email: string;
                            data: {
                                [key: string]: unknown;
                            };
                            /** @description active (steps to perform now), waiting, completed, exited (exit step, unsubscribe, cancel), failed */
                            status: "active" | "waiting" | "completed" | "exited" | "failed";
                            /** @description Next step to perform (steps[3].then[0]); null once finished */
                            position: string | null;
                            /** @description Event a "wait until" step waits for */
                            waitingFor: string | null;
                            /** @description When a waiting run resumes (end of the wait, or the timeout) */
                            wakesAt: string | null;
                            exitReason: string | null;
                            /** Format: date-time */
                            startedAt: string;
                            finishedAt: string | null;
                            /** @description Present (true) when a test key made the request: nothing was stored */
                            sandbox?: boolean;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No automation with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getAutomationRun: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                runId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "run_019a6f0c3b2e7d1a9c4b5e6f7a8b9c50",
                     *       "automationId": "aut_019a6f0c3b2e7d1a9c4b5e6f7a8b9c40",
                     *       "email": "ada@example.com",
                     *       "data": {
                     *         "cartUrl": "https://shop.example/cart/42"
                     *       },
                     *       "status": "waiting",
                     *       "position": "steps[1]",
                     *       "waitingFor": "purchase",
                     *       "wakesAt": "2026-11-21T10:15:30.123Z",
                     *       "exitReason": null,
                     *       "startedAt": "2026-11-20T10:15:30.123Z",
                     *       "finishedAt": null,
                     *       "steps": [
                     *         {
                     *           "step": "steps[0]",
                     *           "type": "wait",
                     *           "outcome": "waiting",
                     *           "detail": {
                     *             "until": "purchase",
                     *             "timeout": "1d"
                     *           },
                     *           "messageId": null,
                     *           "at": "2026-11-20T10:15:30.123Z"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        /** @description run_… */
                        id: string;
                        automationId: string;
                        email: string;
                        data: {
                            [key: string]: unknown;
                        };
                        /** @description active (steps to perform now), waiting, completed, exited (exit step, unsubscribe, cancel), failed */
                        status: "active" | "waiting" | "completed" | "exited" | "failed";
                        /** @description Next step to perform (steps[3].then[0]); null once finished */
                        position: string | null;
                        /** @description Event a "wait until" step waits for */
                        waitingFor: string | null;
                        /** @description When a waiting run resumes (end of the wait, or the timeout) */
                        wakesAt: string | null;
                        exitReason: string | null;
                        /** Format: date-time */
                        startedAt: string;
                        finishedAt: string | null;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                        steps: {
                            /** @description Path of the step, e.g. steps[1] */
                            step: string;
                            type: string;
                            /** @description sent, skipped, waiting, resumed, timed_out, then, else, updated, exited, failed, completed */
                            outcome: string;
                            detail: {
                                [key: string]: unknown;
                            };
                            messageId: string | null;
                            /** Format: date-time */
                            at: string;
                        }[];
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No run with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    cancelAutomationRun: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                runId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "run_019a6f0c3b2e7d1a9c4b5e6f7a8b9c50",
                     *       "automationId": "aut_019a6f0c3b2e7d1a9c4b5e6f7a8b9c40",
                     *       "email": "ada@example.com",
                     *       "data": {
                     *         "cartUrl": "https://shop.example/cart/42"
                     *       },
                     *       "status": "exited",
                     *       "position": null,
                     *       "waitingFor": null,
                     *       "wakesAt": null,
                     *       "exitReason": "cancelled",
                     *       "startedAt": "2026-11-20T10:15:30.123Z",
                     *       "finishedAt": null,
                     *       "steps": [
                     *         {
                     *           "step": "steps[0]",
                     *           "type": "wait",
                     *           "outcome": "waiting",
                     *           "detail": {
                     *             "until": "purchase",
                     *             "timeout": "1d"
                     *           },
                     *           "messageId": null,
                     *           "at": "2026-11-20T10:15:30.123Z"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        /** @description run_… */
                        id: string;
                        automationId: string;
                        email: string;
                        data: {
                            [key: string]: unknown;
                        };
                        /** @description active (steps to perform now), waiting, completed, exited (exit step, unsubscribe, cancel), failed */
                        status: "active" | "waiting" | "completed" | "exited" | "failed";
                        /** @description Next step to perform (steps[3].then[0]); null once finished */
                        position: string | null;
                        /** @description Event a "wait until" step waits for */
                        waitingFor: string | null;
                        /** @description When a waiting run resumes (end of the wait, or the timeout) */
                        wakesAt: string | null;
                        exitReason: string | null;
                        /** Format: date-time */
                        startedAt: string;
                        finishedAt: string | null;
                        /** @description Present (true) when a test key made the request: nothing was stored */
                        sandbox?: boolean;
                        steps: {
                            /** @description Path of the step, e.g. steps[1] */
                            step: string;
                            type: string;
                            /** @description sent, skipped, waiting, resumed, timed_out, then, else, updated, exited, failed, completed */
                            outcome: string;
                            detail: {
                                [key: string]: unknown;
                            };
                            messageId: string | null;
                            /** Format: date-time */
                            at: string;
                        }[];
                    };
                };
            };
            /** @description Malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No run with this id in this account (ids of other accounts are not found either) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description The run already ended */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @description URI of the problem type: /docs/errors#<code> */
                        type: string;
                        title: string;
                        status: number;
                        detail: string;
                        /** @description Stable machine-readable error code */
                        code: string;
                        instance?: string;
                        requestId?: string;
                        errors?: {
                            field: string;
                            message: string;
                        }[];
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Body over the size limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limit or quota exceeded; see Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the body carries a requestId */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
}
