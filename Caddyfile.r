{
	admin off
	debug
}
http://127.0.0.1:19400 {
	handle {
		@origin_only path /v1/nodes/join /v1/nodes/artifacts /v1/nodes/artifacts/*
		reverse_proxy @origin_only 127.0.0.1:19401
		# The API replicas (--control-nodes): one that fails /healthz (every 2 s, 2 s timeout) or refuses a
		# connection is left out for 10 s, and a request that could not be sent to one (connection refused,
		# or no answer to the connection within 3 s: a host gone) is sent to another, whatever its method,
		# for up to 5 s. Caddy before 2.11.2 (Debian 12 has 2.6.2) closes a request's body when a
		# connection fails and cannot send it again (caddyserver/caddy#7546): reading the body into the
		# {http.request.body} placeholder first replaces it with an in-memory copy that survives that close
		# (bodies under 1 MB, the API's limit; a longer or unsized one is passed through as it comes).
		# No idle connections are kept (keepalive off): a request on a kept connection to a host that
		# went away would wait for an answer instead of failing to connect. A request an API took but
		# does not answer (a frozen host) ends after 75 s, longer than the API's slowest answer (a
		# recording waits up to 60 s for its egress worker).
		@replayable_body {
			not method GET HEAD OPTIONS
			header_regexp Content-Length ^[0-9]{1,6}$
		}
		vars @replayable_body replayable_body "{http.request.body}"
		reverse_proxy 127.0.0.1:19401 127.0.0.1:19402 {
			lb_policy round_robin
			lb_try_duration 5s
			lb_try_interval 250ms
			fail_duration 10s
			max_fails 1
			health_uri /healthz
			health_interval 2s
			health_timeout 2s
			transport http {
				dial_timeout 3s
				keepalive off
				response_header_timeout 75s
			}
		}
	}
}
