package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// Environment of a child process: where the service listens and the token
// that binds this child to its runtime generation.
const (
	envSocket = "DIAGRELAY_SOCKET"
	envToken  = "DIAGRELAY_TOKEN"
)

// client is a minimal JSON-RPC client for one child connection.
type client struct {
	c  net.Conn
	r  *bufio.Reader
	id int
}

// dialChild connects with DIAGRELAY_SOCKET and says hello with
// DIAGRELAY_TOKEN.
func dialChild() (*client, error) {
	sock, tok := os.Getenv(envSocket), os.Getenv(envToken)
	if sock == "" || tok == "" {
		return nil, fmt.Errorf("no manager host: %s and %s must both be set", envSocket, envToken)
	}
	nc, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		return nil, err
	}
	cl := &client{c: nc, r: bufio.NewReader(nc)}
	if _, err := cl.call("session.hello", map[string]string{"token": tok}); err != nil {
		nc.Close()
		return nil, err
	}
	return cl, nil
}

func (cl *client) Close() error { return cl.c.Close() }

// rpcErr is an error reply from the service.
type rpcErr struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcErr) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// call sends one request and waits for its reply, skipping notifications.
func (cl *client) call(method string, params any) (json.RawMessage, error) {
	cl.id++
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": cl.id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	cl.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := cl.c.Write(append(req, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := cl.r.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("reading the reply: %w", err)
		}
		var resp struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *rpcErr         `json:"error"`
		}
		if err := json.Unmarshal(line, &resp); err != nil {
			return nil, fmt.Errorf("bad reply: %w", err)
		}
		if resp.ID == nil {
			if resp.Error != nil { // an error the server could not tie to a request
				return nil, resp.Error
			}
			continue // a notification
		}
		if *resp.ID != cl.id {
			return nil, errors.New("reply to another request")
		}
		if resp.Error != nil {
			return nil, resp.Error
		}
		return resp.Result, nil
	}
}
