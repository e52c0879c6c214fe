module github.com/diagrelay/diagrelay

go 1.26.0

require (
	github.com/asaskevich/EventBus v0.0.0-20200907212545-49d423059eef
	github.com/clipperhouse/uax29/v2 v2.7.0
	github.com/go-json-experiment/json v1.27.2
	go.etcd.io/bbolt v1.5.0
	golang.org/x/mod v0.43.0
	golang.org/x/text v0.44.0
	golang.org/x/time v0.16.0
	pgregory.net/rapid v1.3.0
)

require golang.org/x/sys v0.45.0 // indirect
