"""What every client of the controller shares: finding it (state directory, addresses), talking to it (HTTP/1.1 on a kept-alive socket), following its leader, and starting one as a child process."""
