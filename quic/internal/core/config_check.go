package core

// Check reports whether NewClientConn and NewServerConn would accept the
// Config, with the defaults filled in, so that a server can refuse a bad
// Config when it starts rather than drop every client later.
func (c *Config) Check() error {
	_, err := c.withDefaults()
	return err
}
